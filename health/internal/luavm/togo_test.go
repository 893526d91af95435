package luavm

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

func eval(t *testing.T, vm *VM, src string, obj, globals map[string]any) (any, error) {
	t.Helper()
	prog, err := vm.Compile("eval.lua", src)
	if err != nil {
		t.Fatal(err)
	}
	return vm.Eval(context.Background(), prog, obj, globals)
}

func TestEval_ConvertsResultToJSONShapes(t *testing.T) {
	vm := New(DefaultOptions())
	obj := map[string]any{
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"a": "b"}},
		"spec":     map[string]any{"replicas": int64(2), "list": []any{"x", "y"}},
	}
	got, err := eval(t, vm, `obj.spec.replicas = tonumber(actionParams["n"]) obj.spec.ratio = 0.5 obj.spec.empty = {} return obj`, obj,
		map[string]any{"actionParams": map[string]any{"n": "5"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"a": "b"}},
		"spec":     map[string]any{"replicas": int64(5), "ratio": 0.5, "empty": map[string]any{}, "list": []any{"x", "y"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	// The input object is never written.
	if obj["spec"].(map[string]any)["replicas"] != int64(2) {
		t.Fatalf("input changed: %v", obj)
	}
}

func TestEval_RejectsResultsThatAreNotData(t *testing.T) {
	vm := New(DefaultOptions())
	cases := map[string]struct {
		src  string
		kind error
	}{
		"function":   {`return {f = function() end}`, ErrRuntime},
		"cycle":      {`local t = {} t.self = t return t`, ErrRuntime},
		"mixed keys": {`return {1, 2, a = 3}`, ErrRuntime},
		"nan":        {`return {x = 0/0}`, ErrRuntime},
		"shared dag": {`local t = {} for i = 1, 60 do t = {a = t, b = t} end return t`, ErrMemoryLimit},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := eval(t, vm, c.src, nil, nil)
			if !errors.Is(err, c.kind) {
				t.Fatalf("want %v, got %v", c.kind, err)
			}
		})
	}
}

func TestRequireOS_OnlyWhenEnabled(t *testing.T) {
	opts := DefaultOptions()
	opts.RequireOS = true
	vm := New(opts)
	got, err := eval(t, vm, `local os = require("os") return type(os.time())`, nil, nil)
	if err != nil || got != "number" {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := eval(t, vm, `return require("io")`, nil, nil); !errors.Is(err, ErrForbidden) {
		t.Fatalf("require(io): want ErrForbidden, got %v", err)
	}
	if _, err := eval(t, New(DefaultOptions()), `return require("os")`, nil, nil); !errors.Is(err, ErrForbidden) {
		t.Fatalf("require without RequireOS: want ErrForbidden, got %v", err)
	}
}
