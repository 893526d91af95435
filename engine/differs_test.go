package engine

import (
	"context"
	"testing"

	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/engine/internal/compare"
)

// TestAppsOfTheSameOptionsForkOneDiffer: apps that compare with the same
// options fork one compiled Differ, each app its own fork (its own memo
// and masking key); other ignore rules compile another; a host's
// NewDiffer is called for every app, as before.
func TestAppsOfTheSameOptionsForkOneDiffer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n"})
	e := newEngine(t, nil)
	a, b, c := dirApp(ns+"-a", dir, ns), dirApp(ns+"-b", dir, ns), dirApp(ns+"-c", dir, ns)
	c.Spec.IgnoreDifferences = []ResourceIgnoreDifferences{{Kind: "ConfigMap", JSONPointers: []string{"/data/k"}}}
	for _, app := range []*Application{a, b, c} {
		if _, err := e.Refresh(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	bases, _ := e.parts().comparer.Bases()
	da, db := e.parts().comparer.Current(e.instanceOf(a)), e.parts().comparer.Current(e.instanceOf(b))
	if bases != 2 {
		t.Fatalf("%d compiled Differs for two sets of options", bases)
	}
	if da == db || da.(*compare.MemoDiffer).Differ == db.(*compare.MemoDiffer).Differ {
		t.Fatal("two apps share one Differ: each must have its own fork")
	}

	calls := 0
	host := newEngine(t, func(o *Options) {
		o.NewDiffer = func(opts diff.Options) (Differ, error) { calls++; return diff.New(opts) }
	})
	for _, app := range []*Application{a, b} {
		if _, err := host.Refresh(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	if hostBases, forking := host.parts().comparer.Bases(); forking || calls != 2 {
		t.Fatalf("a host's NewDiffer: %d bases (forking %v), called %d times for two apps", hostBases, forking, calls)
	}
}
