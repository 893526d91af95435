package actions

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/health"
)

func deployment() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "prod", "uid": "u1", "resourceVersion": "7"},
		"spec": map[string]any{
			"replicas":    int64(2),
			"template":    map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}},
			"tolerations": []any{},
		},
	}}
}

// custom returns a runner whose apps/Deployment actions are one "act"
// action with the given script.
func custom(t *testing.T, script string) *Runner {
	t.Helper()
	opts := DefaultOptions()
	// A generous time limit, so that the machine-independent limits
	// (instructions, memory) decide whatever the load.
	opts.Lua.Limits.Timeout = 30 * time.Second
	opts.Overrides = map[string]Definitions{"apps_Deployment": {
		Discovery: `return {act = {params = {{name = "n", default = "1"}}}}`,
		Actions:   []Definition{{Name: "act", Script: script}},
	}}
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRun_BadScriptsFailTypedAndYieldNothing(t *testing.T) {
	cases := map[string]struct {
		script string
		want   error
	}{
		"endless loop":        {`while true do end`, health.ErrLuaInstructionLimit},
		"allocation bomb":     {`local s = "x" while true do s = s .. s end`, health.ErrLuaMemoryLimit},
		"table bomb":          {`local t = {} for i = 1, 1e9 do t[i] = i end return obj`, health.ErrLuaMemoryLimit},
		"runtime error":       {`error("no")`, health.ErrLuaRuntime},
		"other kind":          {`obj.kind = "StatefulSet" return obj`, ErrIdentityChanged},
		"other name":          {`obj.metadata.name = "api" return obj`, ErrIdentityChanged},
		"other namespace":     {`obj.metadata.namespace = "dev" return obj`, ErrIdentityChanged},
		"other group":         {`obj.apiVersion = "extensions/v1beta1" return obj`, ErrIdentityChanged},
		"patch of another":    {`local o = {apiVersion = "v1", kind = "ConfigMap", metadata = {name = "x", namespace = "prod"}} return {{operation = "patch", resource = o}}`, ErrIdentityChanged},
		"uid":                 {`obj.metadata.uid = "u2" return obj`, ErrForbiddenField},
		"resourceVersion":     {`obj.metadata.resourceVersion = nil return obj`, ErrForbiddenField},
		"managedFields":       {`obj.metadata.managedFields = {{manager = "me"}} return obj`, ErrForbiddenField},
		"returns nothing":     {`return nil`, ErrInvalidResult},
		"returns string":      {`return "done"`, ErrInvalidResult},
		"table without kind":  {`return {spec = {}}`, ErrInvalidResult},
		"unknown operation":   {`return {{operation = "delete", resource = obj}}`, ErrInvalidResult},
		"create without name": {`return {{operation = "create", resource = {apiVersion = "v1", kind = "ConfigMap", metadata = {}}}}`, ErrInvalidResult},
		"create with uid":     {`return {{operation = "create", resource = {apiVersion = "v1", kind = "ConfigMap", metadata = {name = "x", uid = "u"}}}}`, ErrInvalidResult},
		"patched twice":       {`return {{operation = "patch", resource = obj}, {operation = "patch", resource = obj}}`, ErrInvalidResult},
		"io forbidden":        {`io.open("/etc/passwd") return obj`, health.ErrLuaForbidden},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			live := deployment()
			before := live.DeepCopy()
			res, err := custom(t, c.script).Run(context.Background(), live, "act", nil)
			if !errors.Is(err, c.want) {
				t.Fatalf("want %v, got %v", c.want, err)
			}
			var ae *Error
			if !errors.As(err, &ae) || ae.Object != "apps/Deployment prod/web" || ae.Action != "act" {
				t.Fatalf("error does not name the object and action: %#v", err)
			}
			if len(res.Impacted) != 0 {
				t.Fatalf("a failed action returned %d impacted resources", len(res.Impacted))
			}
			if !reflect.DeepEqual(live, before) {
				t.Fatal("the live object was changed")
			}
		})
	}
}

func TestRun_PatchIsMinimalAndCarriesResourceVersion(t *testing.T) {
	r := custom(t, `obj.spec.replicas = tonumber(actionParams.n) obj.spec.template.spec.containers[1].image = "nginx:2" obj.status = {promoteFull = true} return obj`)
	res, err := r.Run(context.Background(), deployment(), "act", map[string]string{"n": "3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Impacted) != 1 || res.Impacted[0].Operation != OperationPatch {
		t.Fatalf("want one patch, got %+v", res.Impacted)
	}
	var patch map[string]any
	if err := json.Unmarshal(res.Impacted[0].Patch, &patch); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"metadata": map[string]any{"resourceVersion": "7"},
		"spec": map[string]any{"replicas": 3.0, "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "web", "image": "nginx:2"}}}}},
	}
	if !reflect.DeepEqual(patch, want) {
		t.Fatalf("patch %s", res.Impacted[0].Patch)
	}
	if string(res.Impacted[0].StatusPatch) != `{"status":{"promoteFull":true}}` {
		t.Fatalf("status patch %s", res.Impacted[0].StatusPatch)
	}
	// The empty list the script saw as {} stays a list.
	if _, ok := res.Impacted[0].Object.Object["spec"].(map[string]any)["tolerations"].([]any); !ok {
		t.Fatal("empty list came back as an object")
	}
}

func TestRun_NoChangeYieldsNothing(t *testing.T) {
	res, err := custom(t, `return obj`).Run(context.Background(), deployment(), "act", nil)
	if err != nil || len(res.Impacted) != 0 {
		t.Fatalf("got %+v, %v", res, err)
	}
}

func TestRun_ParamsDefaultsAndUnknown(t *testing.T) {
	r := custom(t, `obj.spec.replicas = tonumber(actionParams.n) return obj`)
	res, err := r.Run(context.Background(), deployment(), "act", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Impacted[0].Object.Object["spec"].(map[string]any)["replicas"]; got != int64(1) {
		t.Fatalf("default not applied: %v", got)
	}
	if _, err := r.Run(context.Background(), deployment(), "act", map[string]string{"replica": "2"}); !errors.Is(err, ErrInvalidParam) {
		t.Fatalf("want ErrInvalidParam, got %v", err)
	}
}

func TestRun_DiscoveryGatesActions(t *testing.T) {
	r, err := New(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d := deployment()
	if _, err := r.Run(ctx, d, "resume", nil); !errors.Is(err, ErrDisabled) {
		t.Fatalf("resume on a running Deployment: want ErrDisabled, got %v", err)
	}
	if _, err := r.Run(ctx, d, "explode", nil); !errors.Is(err, ErrUnknownAction) {
		t.Fatalf("want ErrUnknownAction, got %v", err)
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}
	if _, err := r.Discover(ctx, cm); !errors.Is(err, ErrNoActions) {
		t.Fatalf("want ErrNoActions, got %v", err)
	}
	list, err := r.Discover(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if names(list) != "[pause restart resume scale]" {
		t.Fatalf("got %s", names(list))
	}
}

func TestNew_OverridesReplaceOrMergeBuiltins(t *testing.T) {
	ctx := context.Background()
	defs := Definitions{Discovery: `return {["drain"] = {}}`, Actions: []Definition{{Name: "drain", Script: `return obj`}}}
	for _, merge := range []bool{false, true} {
		defs.MergeBuiltinActions = merge
		opts := DefaultOptions()
		opts.Overrides = map[string]Definitions{"apps/Deployment": defs}
		r, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		list, err := r.Discover(ctx, deployment())
		if err != nil {
			t.Fatal(err)
		}
		want := "[drain]"
		if merge {
			want = "[drain pause restart resume scale]"
		}
		if names(list) != want {
			t.Fatalf("merge=%v: got %s, want %s", merge, names(list), want)
		}
	}
	// Wildcards match every kind of a group.
	opts := DefaultOptions()
	opts.Overrides = map[string]Definitions{"*.example.com/*": defs}
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "db.example.com/v1", "kind": "Database", "metadata": map[string]any{"name": "d"}}}
	if list, err := r.Discover(ctx, w); err != nil || names(list) != "[drain]" {
		t.Fatalf("wildcard: %v %v", list, err)
	}
}

func TestNew_BrokenDefinitionsNameTheirKey(t *testing.T) {
	for name, defs := range map[string]Definitions{
		"syntax":       {Discovery: `return {`, Actions: nil},
		"no discovery": {Actions: []Definition{{Name: "a", Script: "return obj"}}},
		"no script":    {Discovery: "return {}", Actions: []Definition{{Name: "a"}}},
	} {
		opts := DefaultOptions()
		opts.Overrides = map[string]Definitions{"apps_Deployment": defs}
		if _, err := New(opts); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ParseDefinitions("resource.customizations.actions.apps_Deployment", "discovery.lua: x\nbogus: 1\n"); !errors.Is(err, ErrInvalidDefinition) {
		t.Errorf("unknown field: want ErrInvalidDefinition, got %v", err)
	}
}
