package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/state"
	"github.com/kubegitops/gitops/sync"
	"k8s.io/client-go/kubernetes"
)

// TestLastOperationSurvivesInAConfigMap: an engine whose state store is a
// ConfigMap records a failed sync with its rows and a successful one in
// history; a second engine (another process, the CLI after the agent)
// reads both back, and deleting the app forgets them.
func TestLastOperationSurvivesInAConfigMap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	store := state.NewConfigMapStore(cs, ns)
	e := newEngine(t, func(o *Options) { o.State = store })
	dir := repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n"})
	app := dirApp(ns, dir, ns)
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("first sync: %s %v", res.Phase, err)
	}
	// A broken object: the API server refuses it, the sync fails.
	bad := dirApp(ns+"-bad", repoDir(t, map[string]string{"app/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_A_Name}\n"}), ns)
	if res, _ := e.Sync(ctx, bad, SyncRequest{}); res.Phase == sync.Succeeded {
		t.Fatal("a sync of an invalid name succeeded")
	}

	other := newEngine(t, func(o *Options) { o.State = state.NewConfigMapStore(cs, ns) })
	h, err := other.History(ctx, v1alpha1.KeyOf(app))
	if err != nil || len(h) != 1 || h[0].ID != 1 {
		t.Fatalf("history read back: %+v %v", h, err)
	}
	op, err := other.LastOperation(ctx, v1alpha1.KeyOf(app))
	if err != nil || op == nil || op.Phase != sync.Succeeded || op.FinishedAt.IsZero() || len(op.Results) != 1 || op.Revision != h[0].Revisions[0] {
		t.Fatalf("last operation of the good app: %+v %v", op, err)
	}
	op, err = other.LastOperation(ctx, v1alpha1.KeyOf(bad))
	if err != nil || op == nil || op.Phase == sync.Succeeded || len(op.Results) != 1 || !strings.Contains(op.Results[0].Message, "Not_A_Name") {
		t.Fatalf("last operation of the failed app: %+v %v", op, err)
	}
	if h, _ := other.History(ctx, v1alpha1.KeyOf(bad)); len(h) != 0 {
		t.Fatalf("a failed sync entered history: %+v", h)
	}
	eventually(t, time.Minute, "the app deleted", func() bool {
		res, err := other.Delete(ctx, app, DeleteRequest{})
		return err == nil && res.Done()
	})
	if st, err := store.Load(ctx, app.Name); err != nil || st.Operation != nil || len(st.History) != 0 {
		t.Fatalf("state after delete: %+v %v", st, err)
	}
}

func TestOperationStateKeepsFailedRowsWhenTruncated(t *testing.T) {
	t.Parallel()
	var res sync.Result
	for i := 0; i < state.MaxOperationResults+10; i++ {
		st := sync.TaskSucceeded
		if i == state.MaxOperationResults+5 {
			st = sync.TaskFailed
		}
		res.Results = append(res.Results, sync.ResourceResult{Status: st})
	}
	op := operationStateOf(res, "r", res.State.StartedAt, false, false)
	if len(op.Results) != state.MaxOperationResults || op.Truncated != 10 || op.Results[0].Status != sync.TaskFailed {
		t.Fatalf("kept %d rows, truncated %d, first %s", len(op.Results), op.Truncated, op.Results[0].Status)
	}
}
