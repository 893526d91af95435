package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/examples/operator/controller"
	"github.com/kubegitops/gitops/notify"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/wait"
)

// refreshes is the engine's count of refreshes (gitops_refresh_total, all
// kinds) in reg: one per reconcile that refreshed the app.
func refreshes(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() == "gitops_refresh_total" {
			for _, m := range f.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// TestOwnAnnotationWritesDoNotReconcile counts reconciles: the
// notified.notifications.argoproj.io annotation that the notifications
// controller writes after each delivery, and the removal of the refresh
// annotation the reconciler does itself after a refresh, change nothing
// the reconciler reads, so neither makes it refresh the app again; a
// refresh asked for by annotation still refreshes it once.
func TestOwnAnnotationWritesDoNotReconcile(t *testing.T) {
	reg := prometheus.NewRegistry()
	o := startOperator(t, func(opts *gitops.Options) { opts.Registerer = reg })
	repo := repoDir(t, map[string]string{"app/web.yaml": webManifests})
	o.create(t, newApp(o.ns, appSpec{name: "counted", repo: repo, dest: "default"}))
	o.waitApp(t, "counted", "compared", func(a observed) bool { return a.Status.Sync.Status == "OutOfSync" })

	// quiet fails as soon as the count moves from want within a few
	// seconds (the reconcile an annotation update triggers comes within
	// milliseconds); the app's interval is minutes.
	quiet := func(what string, want float64) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Second)
		err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			if got := refreshes(t, reg); got != want {
				return false, fmt.Errorf("%v refreshes, want %v", got, want)
			}
			return time.Now().After(deadline), nil
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	asked := func(what string, before float64) float64 {
		t.Helper()
		o.patch(t, "counted", map[string]any{"metadata": map[string]any{"annotations": map[string]any{controller.AnnotationRefresh: "normal"}}})
		o.waitApp(t, "counted", what+": refresh annotation removed", func(a observed) bool {
			_, ok := a.Annotations[controller.AnnotationRefresh]
			return !ok
		})
		after := refreshes(t, reg)
		if after != before+1 {
			t.Fatalf("%s: %v refreshes after %v, want one more", what, after, before)
		}
		return after
	}
	n := refreshes(t, reg)
	quiet("after the first refresh", n)
	n = asked("refresh asked", n)
	quiet("after the reconciler removed the refresh annotation", n)

	o.patch(t, "counted", map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		notify.NotifiedAnnotation: `{"on-sync-succeeded:abc:receiver:": 1700000000}`}}})
	o.waitApp(t, "counted", "notified annotation written", func(a observed) bool { return a.Annotations[notify.NotifiedAnnotation] != "" })
	quiet("after the notified annotation was written", n)
	asked("refresh asked after", n)
}
