package health

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
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

// FuzzCheck judges arbitrary JSON as each built-in kind: whatever the
// shape (wrong types, missing fields), a check must not panic and must
// return a valid code or no opinion.
func FuzzCheck(f *testing.F) {
	entries, _ := os.ReadDir(filepath.Join("testdata", "live"))
	for _, e := range entries {
		if data, err := os.ReadFile(filepath.Join("testdata", "live", e.Name())); err == nil && strings.HasSuffix(e.Name(), ".yaml") {
			if j, err := yaml.YAMLToJSON(data); err == nil {
				f.Add(uint8(0), string(j))
			}
		}
	}
	f.Add(uint8(3), `{"status":{"conditions":"x","containerStatuses":[1,{"state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":7}]}}`)
	kinds := append(BuiltinKinds(), schemaGK("example.com", "Widget"), schemaGK("cert-manager.io", "Certificate"))
	slices.SortFunc(kinds, func(a, b schema.GroupKind) int { return strings.Compare(a.String(), b.String()) })
	checker, err := NewChecker(DefaultOptions())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, which uint8, objJSON string) {
		obj := map[string]any{}
		if json.Unmarshal([]byte(objJSON), &obj) != nil {
			return
		}
		gk := kinds[int(which)%len(kinds)]
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion(schema.GroupVersion{Group: gk.Group, Version: "v1"}.String())
		u.SetKind(gk.Kind)
		st, err := checker.Check(u)
		if err != nil {
			var le *LuaError
			if !errors.As(err, &le) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if st != nil && !st.Code.Valid() {
			t.Fatalf("invalid code %q", st.Code)
		}
	})
}

func schemaGK(group, kind string) schema.GroupKind { return schema.GroupKind{Group: group, Kind: kind} }
