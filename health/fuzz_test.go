package health

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FuzzLuaHealth runs arbitrary scripts on arbitrary objects. Whatever the
// input, the engine must not panic, must end within its limits, must return
// either a valid status or a typed *LuaError, and must return the same
// answer twice (results are deterministic and calls share no state).
//
// The committed corpus (testdata/fuzz/FuzzLuaHealth) holds the shipped
// scripts' shapes and the sandbox attacks; f.Add seeds the shipped scripts
// with one of their test objects.
func FuzzLuaHealth(f *testing.F) {
	scripts := BuiltinScripts()
	_ = fs.WalkDir(scripts, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "health.lua" {
			return err
		}
		src, _ := fs.ReadFile(scripts, p)
		f.Add(string(src), `{"apiVersion":"v1","kind":"X","metadata":{"name":"a","generation":1},"status":{"observedGeneration":1,"conditions":[{"type":"Ready","status":"True"}]}}`)
		return nil
	})
	for _, a := range sandboxAttacks {
		f.Add(a.src, `{"metadata":{"name":"a"}}`)
	}
	opts := DefaultLuaOptions()
	opts.Limits.Timeout = 200 * time.Millisecond
	opts.Limits.MaxInstructions = 200_000
	opts.Clock = func() time.Time { return time.Unix(1800000000, 0) }
	engine := NewLuaEngine(opts)
	f.Fuzz(func(t *testing.T, src, objJSON string) {
		obj := map[string]any{}
		if json.Unmarshal([]byte(objJSON), &obj) != nil {
			obj = map[string]any{"metadata": map[string]any{"name": "x"}}
		}
		script, err := engine.Compile("fuzz", src)
		if err != nil {
			if !errors.Is(err, ErrLuaSyntax) {
				t.Fatalf("compile error not typed: %v", err)
			}
			return
		}
		u := &unstructured.Unstructured{Object: obj}
		first, err1 := engine.Run(context.Background(), script, u)
		second, err2 := engine.Run(context.Background(), script, u)
		for _, err := range []error{err1, err2} {
			var le *LuaError
			if err != nil && !errors.As(err, &le) {
				t.Fatalf("error not a *LuaError: %v", err)
			}
		}
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("not deterministic: %v then %v", err1, err2)
		}
		if err1 != nil {
			// Timeouts depend on the machine; every other failure must repeat.
			if !errors.Is(err1, ErrLuaTimeout) && !errors.Is(err2, ErrLuaTimeout) && err1.Error() != err2.Error() {
				t.Fatalf("not deterministic: %v then %v", err1, err2)
			}
			return
		}
		if !first.Code.Valid() {
			t.Fatalf("invalid code %q", first.Code)
		}
		if *first != *second {
			t.Fatalf("not deterministic: %v then %v", first, second)
		}
	})
}
