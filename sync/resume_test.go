package sync

import (
	"context"
	"encoding/json"
	"testing"
)

const hookAndWaves = `apiVersion: batch/v1
kind: Job
metadata: {name: migrate, annotations: {argocd.argoproj.io/hook: PreSync}}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
---
` + deployment

// The API server dies right after the PreSync phase and comes back while the
// sync goes on: the same call must finish, retrying what failed meanwhile.
// Not parallel: it takes the API server from every test.
func TestAPIServerRestartMidSync(t *testing.T) {
	ns := cluster.TestNamespace(t)
	restarted := make(chan error, 1)
	s, _ := newSyncer(t, func(o *syncerSetup) {
		o.OnProgress = func(p Progress) {
			if p.Phase == "PreSync" {
				if err := cluster.StopAPIServer(); err != nil {
					t.Error(err)
				}
				go func() { restarted <- cluster.StartAPIServer(context.Background()) }()
			}
		}
	})
	res, err := s.Sync(context.Background(), Request{App: "shop", Revision: "abc", Desired: decode(t, ns, hookAndWaves), Namespace: ns})
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	mustSucceed(t, res, err)
	d, _ := get(t, gvrDeployments, ns, "web")
	if !conditionTrue(d, "Available") {
		t.Fatal("Deployment not Available after the restart")
	}
}

// The host stops mid-operation (its context ends after wave 0), the API
// server restarts, and a new syncer resumes from the state, serialised as a
// host would store it: the sync finishes and the PreSync hook is not run a
// second time.
func TestInterruptedSyncResumesWithoutRerunningHooks(t *testing.T) {
	ns := cluster.TestNamespace(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, _ := newSyncer(t, func(o *syncerSetup) {
		o.OnProgress = func(p Progress) {
			if p.Phase == "Sync" && p.Wave == 0 {
				cancel()
			}
		}
	})
	req := Request{App: "shop", Revision: "abc", Desired: decode(t, ns, hookAndWaves), Namespace: ns}
	res, err := s.Sync(ctx, req)
	if err == nil || res.Phase != Running {
		t.Fatalf("interrupted sync: phase %s, err %v", res.Phase, err)
	}
	if _, ok := get(t, gvrDeployments, ns, "web"); ok {
		t.Fatal("wave 1 ran after the interruption")
	}
	hook, ok := get(t, gvrJobs, ns, "migrate")
	if !ok {
		t.Fatal("PreSync hook missing")
	}
	stored, err := json.Marshal(res.State)
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.RestartAPIServer(context.Background()); err != nil {
		t.Fatal(err)
	}

	var state State
	if err := json.Unmarshal(stored, &state); err != nil {
		t.Fatal(err)
	}
	fresh, counter := newSyncer(t, nil)
	req.State = &state
	res, err = fresh.Sync(context.Background(), req)
	mustSucceed(t, res, err)
	again, _ := get(t, gvrJobs, ns, "migrate")
	if again.GetUID() != hook.GetUID() {
		t.Fatal("the PreSync hook ran a second time")
	}
	if r := row(t, res, "batch/Job "+ns+"/migrate"); r.Status != TaskSucceeded {
		t.Fatalf("hook row after resume: %+v", r)
	}
	if counter.count() == 0 {
		t.Fatal("the resumed sync wrote nothing; wave 1 was never applied")
	}
	if _, ok := get(t, gvrDeployments, ns, "web"); !ok {
		t.Fatal("the resumed sync did not apply wave 1")
	}
}
