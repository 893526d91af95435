package sync

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	gvrCRDs   = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	deleteNow = metav1.DeleteOptions{}
)

const threeConfigMaps = `apiVersion: v1
kind: ConfigMap
metadata: {name: keep}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: gone}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: protected, annotations: {argocd.argoproj.io/sync-options: Prune=false}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ask, annotations: {argocd.argoproj.io/sync-options: Prune=confirm}}
`

func TestPrune(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	s, _ := newSyncer(t, nil)
	ctx := context.Background()
	res, err := s.Sync(ctx, Request{App: "shop", Desired: decode(t, ns, threeConfigMaps), Namespace: ns})
	mustSucceed(t, res, err)
	// An object of another app and an untracked one must never be touched.
	other, _ := newSyncer(t, nil)
	res, err = other.Sync(ctx, Request{App: "other", Desired: decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: theirs}\n"), Namespace: ns})
	mustSucceed(t, res, err)

	onlyKeep := decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keep}\n")

	// Disabled: nothing deleted, the extra objects reported.
	res, err = s.Sync(ctx, Request{App: "shop", Desired: onlyKeep, Namespace: ns})
	mustSucceed(t, res, err)
	if r := row(t, res, "ConfigMap "+ns+"/gone"); r.Status != TaskSkipped || r.Message != "ignored (requires pruning)" {
		t.Fatalf("row %+v", r)
	}
	if _, ok := get(t, gvrConfigMaps, ns, "gone"); !ok {
		t.Fatal("pruned without Prune")
	}

	// Enabled: "gone" goes, Prune=false stays, Prune=confirm waits.
	res, err = s.Sync(ctx, Request{App: "shop", Desired: onlyKeep, Namespace: ns, Prune: true})
	if err != nil || res.Phase != Running || len(res.PendingConfirmation) != 1 || res.PendingConfirmation[0].Name != "ask" {
		t.Fatalf("phase %s pending %v err %v", res.Phase, res.PendingConfirmation, err)
	}
	if _, ok := get(t, gvrConfigMaps, ns, "ask"); !ok {
		t.Fatal("Prune=confirm deleted without confirmation")
	}
	res, err = s.Sync(ctx, Request{App: "shop", Desired: onlyKeep, Namespace: ns, Prune: true, ConfirmPrune: true, State: &res.State})
	mustSucceed(t, res, err)
	for name, want := range map[string]bool{"keep": true, "gone": false, "protected": true, "ask": false, "theirs": true} {
		if _, ok := get(t, gvrConfigMaps, ns, name); ok != want {
			t.Errorf("%s exists=%v, want %v", name, ok, want)
		}
	}
	if r := row(t, res, "ConfigMap "+ns+"/protected"); r.Message != "ignored (Prune=false)" {
		t.Fatalf("row %+v", r)
	}

	// Empty render: refused, nothing deleted.
	res, err = s.Sync(ctx, Request{App: "shop", Desired: nil, Namespace: ns, Prune: true})
	if !errors.Is(err, errEmptyPrune) || res.Phase != Failed {
		t.Fatalf("empty render: phase %s err %v", res.Phase, err)
	}
	if _, ok := get(t, gvrConfigMaps, ns, "keep"); !ok {
		t.Fatal("an empty render pruned")
	}
	res, err = s.Sync(ctx, Request{App: "shop", Desired: nil, Namespace: ns, Prune: true, AllowEmpty: true})
	mustSucceed(t, res, err)
	if _, ok := get(t, gvrConfigMaps, ns, "keep"); ok {
		t.Fatal("AllowEmpty did not prune")
	}
}

func TestPruneSparesNamespaceInUseAndClusterScoped(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	s, _ := newSyncer(t, nil)
	ctx := context.Background()
	role := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: " + ns + "-reader}\nrules: []\n"
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
	res, err := s.Sync(ctx, Request{App: "shop", Desired: decode(t, ns, role+"---\n"+cm), Namespace: ns})
	mustSucceed(t, res, err)
	t.Cleanup(func() {
		_ = dyn(t).Resource(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}).Delete(context.Background(), ns+"-reader", deleteNow)
	})
	res, err = s.Sync(ctx, Request{App: "shop", Desired: decode(t, ns, cm), Namespace: ns, Prune: true})
	mustSucceed(t, res, err)
	r := row(t, res, "rbac.authorization.k8s.io/ClusterRole "+ns+"-reader")
	if r.Status != TaskSkipped || !strings.Contains(r.Message, "cluster-scoped") {
		t.Fatalf("cluster-scoped prune without opt-in: %+v", r)
	}
	// With the opt-in it goes.
	s2, _ := newSyncer(t, func(o *syncerSetup) { o.PruneClusterScoped = true })
	res, err = s2.Sync(ctx, Request{App: "shop", Desired: decode(t, ns, cm), Namespace: ns, Prune: true})
	mustSucceed(t, res, err)
	if r := row(t, res, "rbac.authorization.k8s.io/ClusterRole "+ns+"-reader"); r.Action != Pruned || r.Status != TaskSucceeded {
		t.Fatalf("opted-in prune: %+v", r)
	}
}

func TestPruneNeverDeletesNamespaceStillUsed(t *testing.T) {
	op := &operation{req: Request{Prune: true}, s: &Syncer{opts: DefaultOptions(), with: Collaborators{}.withDefaults()}}
	nsLive := decodeOne(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n")
	op.tasks = []*task{
		{key: resource.Key{Kind: "ConfigMap", Namespace: "team-a", Name: "c"}, state: &TaskState{Status: TaskPending}},
		{key: resource.Key{Kind: "Namespace", Name: "team-a"}, prune: true, live: nsLive, state: &TaskState{Status: TaskPending}},
	}
	op.decidePrunes()
	if st := op.tasks[1].state; st.Status != TaskSkipped || !strings.Contains(st.Message, "still holds") {
		t.Fatalf("namespace prune: %+v", st)
	}
}
