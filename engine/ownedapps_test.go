package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// OwnedApps gives copies of the specs Run reconciles of the top-level apps,
// sorted by key, changes made through Upsert included; the child app an
// app of apps renders is managed but left out; nil before Run runs.
func TestOwnedAppsAreTheTopLevelSpecs(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{
		"child/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-child}\n",
		"app/child.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: ` + ns + `-child}
spec:
  source: {repoURL: DIR, path: child}
  destination: {server: https://kubernetes.default.svc, namespace: ` + ns + `}
`,
	})
	child := filepath.Join(dir, "app/child.yaml")
	data, _ := os.ReadFile(child)
	if err := os.WriteFile(child, []byte(strings.ReplaceAll(string(data), "DIR", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, func(o *Options) { o.Interval = time.Hour })
	if got := e.Apps().OwnedApps(); got != nil {
		t.Fatalf("before Run: %v", got)
	}
	parent := dirApp(ns, dir, ns)
	other := dirApp(ns+"-b", repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n"}), ns)
	startRun(t, e, other, parent)
	eventually(t, time.Minute, "the child app managed", func() bool {
		return slices.ContainsFunc(e.Apps().ManagedApps(), func(k v1alpha1.AppKey) bool { return k.Name == ns+"-child" })
	})
	changed := *parent
	changed.Annotations = map[string]string{"example.invalid/changed": "yes"}
	if err := e.Apps().Upsert(changed); err != nil {
		t.Fatal(err)
	}
	got := e.Apps().OwnedApps()
	if len(got) != 2 || got[0].Name != ns || got[1].Name != ns+"-b" || got[0].Annotations["example.invalid/changed"] != "yes" {
		t.Fatalf("owned apps %+v, want %s (as upserted) and %s-b", got, ns, ns)
	}
	got[0].Annotations["example.invalid/changed"] = "by the caller"
	if again := e.Apps().OwnedApps(); again[0].Annotations["example.invalid/changed"] != "yes" {
		t.Fatal("a change of the returned spec reached the engine's")
	}
}
