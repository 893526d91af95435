package engine

import (
	"context"
	"errors"
	"testing"
)

// TestConditionKeepsTheTypedError: the README promises a typed
// ClusterUnavailableError in the conditions of an app whose cluster is
// gone; a host finds it with errors.As on Condition.Err.
func TestConditionKeepsTheTypedError(t *testing.T) {
	t.Parallel()
	dir := repoDir(t, map[string]string{"app/web.yaml": webApp})
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "prod", Server: "https://prod.invalid", KubeVersion: "1.31.0"}}
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	app := dirApp("offline", dir, "shop")
	app.Spec.Destination = ApplicationDestination{Name: "prod", Namespace: "shop"}
	st, err := e.Refresh(context.Background(), app)
	if err == nil || len(st.Conditions) != 1 {
		t.Fatalf("refresh of an offline destination: %v, conditions %+v", err, st.Conditions)
	}
	var unavailable *ClusterUnavailableError
	if c := st.Conditions[0]; !errors.As(c.Err, &unavailable) || unavailable.Cluster != "prod" || c.Message != c.Err.Error() {
		t.Fatalf("condition %+v does not carry the ClusterUnavailableError", c)
	}
}
