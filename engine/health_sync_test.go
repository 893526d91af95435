package engine

import (
	"context"
	"fmt"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/sync"
)

const deploymentWithBudget = `apiVersion: apps/v1
kind: Deployment
metadata: {name: db}
spec:
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: example.com/db:1}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: db}}
`

// TestDeploymentAndBudgetSyncFirstTime: a budget created in the same wave
// as its Deployment sees no healthy pods at first; that must not fail the
// sync (it once did, 6 times in 7): the budget is a policy, Healthy once
// observed, as in Argo CD.
func TestDeploymentAndBudgetSyncFirstTime(t *testing.T) {
	t.Parallel()
	e := newEngine(t, nil)
	var wg gosync.WaitGroup
	errs := make(chan error, 3)
	for i := 0; i < 3; i++ {
		ns := cluster.TestNamespace(t)
		app := dirApp(ns, repoDir(t, map[string]string{"app/db.yaml": deploymentWithBudget}), ns)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.Sync(context.Background(), app, SyncRequest{})
			if err != nil || res.Phase != sync.Succeeded {
				errs <- fmt.Errorf("%s: %s %s %v %+v", ns, res.Phase, res.Message, err, res.Results)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestHealthScriptErrorFailsTheSyncAtOnce: a Lua health script that hits
// its instruction limit fails that object's health check with its message
// at once, instead of leaving the wave to wait for its whole timeout.
func TestHealthScriptErrorFailsTheSyncAtOnce(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	ho := health.DefaultOptions()
	ho.Overrides = map[string]string{"ConfigMap": "while true do end\nreturn {status = \"Healthy\"}\n"}
	checker, err := health.NewChecker(ho)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, func(o *Options) { o.Health = checker; o.Sync.WaveTimeout = 10 * time.Minute })
	app := dirApp(ns, repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: looping}\n"}), ns)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, _ := e.Sync(ctx, app, SyncRequest{})
	if ctx.Err() != nil {
		t.Fatal("the sync waited on a failing health script until the test's deadline")
	}
	if res.Phase != sync.Failed || len(res.Results) != 1 || res.Results[0].Status != sync.TaskFailed ||
		!strings.Contains(res.Results[0].Message, "health check failed") || !strings.Contains(res.Results[0].Message, "ConfigMap") {
		t.Fatalf("got %s %q %+v, want a failed sync whose ConfigMap row says its health check failed", res.Phase, res.Message, res.Results)
	}
}
