package health

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestHostGoChecksWinButNeverSeeDeletion(t *testing.T) {
	calls := 0
	opts := DefaultOptions()
	// A Lua override for the same kind loses to the Go check.
	opts.Overrides = map[string]string{"apps/Deployment": `return {status = "Degraded", message = "lua"}`}
	opts.Checks = map[schema.GroupKind]CheckerFunc{
		{Group: "apps", Kind: "Deployment"}: func(*unstructured.Unstructured) (*Status, error) {
			calls++
			return &Status{Code: Healthy, Message: "go"}, nil
		},
		{Group: "example.com", Kind: "Broken"}: func(*unstructured.Unstructured) (*Status, error) {
			return nil, errors.New("cannot judge")
		},
	}
	c, err := NewChecker(opts)
	if err != nil {
		t.Fatal(err)
	}
	d := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "shop"}}}
	if st, err := c.Check(d); err != nil || st.Code != Healthy || st.Message != "go" {
		t.Fatalf("Go check: %+v %v", st, err)
	}
	if c.ScriptFor(schema.GroupKind{Group: "apps", Kind: "Deployment"}) != "" {
		t.Fatal("ScriptFor names a script for a kind a Go check judges")
	}
	now := metav1.Now()
	d.SetDeletionTimestamp(&now)
	if st, _ := c.Check(d); st.Code != Progressing || calls != 1 {
		t.Fatalf("deleting object: %+v, Go check called %d times", st, calls)
	}
	b := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Broken", "metadata": map[string]any{"name": "b"}}}
	st, err := c.Check(b)
	if err == nil || st.Code != Unknown || !strings.Contains(err.Error(), "example.com/Broken") {
		t.Fatalf("failing Go check: %+v %v", st, err)
	}
}

// CheckContext passes the caller's context to a ContextChecker: a script
// that loops stops when the context ends, long before its own time limit.
func TestCheckContextStopsAScriptWithItsCaller(t *testing.T) {
	opts := DefaultOptions()
	opts.Lua.Limits.Timeout = time.Minute
	opts.Lua.Limits.MaxInstructions = 1 << 62
	opts.Overrides = map[string]string{"example.com/Spin": `while true do end`}
	c, err := NewChecker(opts)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Spin", "metadata": map[string]any{"name": "s"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	st, err := CheckContext(ctx, c, obj)
	if err == nil || st.Code != Unknown {
		t.Fatalf("looping script under a cancelled context: %+v %v", st, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the script ran %v after its caller's context ended", d)
	}
	// A plain Checker is called as it is.
	plain := CheckerFunc(func(*unstructured.Unstructured) (*Status, error) { return &Status{Code: Healthy}, nil })
	if st, err := CheckContext(ctx, plain, obj); err != nil || st.Code != Healthy {
		t.Fatalf("plain checker: %+v %v", st, err)
	}
}
