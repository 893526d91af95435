package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/sync"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const volatileCM = `apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {stable: git, volatile: git}
`

// A sync and the diff before it agree on ignored fields. With
// RespectIgnoreDifferences=true a heal of data.stable keeps the drifted
// data.volatile (server-side and client-side apply); without it the heal
// resets both, and the diff said beforehand that volatile would be reset.
func TestSyncAndDiffAgreeOnIgnoredFields(t *testing.T) {
	t.Parallel()
	pointer := ResourceIgnoreDifferences{Kind: "ConfigMap", JSONPointers: []string{"/data/volatile"}}
	jq := ResourceIgnoreDifferences{Kind: "ConfigMap", JQPathExpressions: []string{".data.volatile"}}
	cases := []struct {
		name    string
		rule    ResourceIgnoreDifferences
		options []string
		respect bool
	}{
		{"pointer-ssa-respect", pointer, []string{"RespectIgnoreDifferences=true"}, true},
		{"jq-ssa-respect", jq, []string{"RespectIgnoreDifferences=true"}, true},
		{"pointer-csa-respect", pointer, []string{"RespectIgnoreDifferences=true", "ServerSideApply=false"}, true},
		{"pointer-ssa-default", pointer, nil, false},
		{"jq-csa-default", jq, []string{"ServerSideApply=false"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ns := cluster.TestNamespace(t)
			e := newEngine(t, nil)
			app := dirApp(ns, repoDir(t, map[string]string{"app/cm.yaml": volatileCM}), ns)
			app.Spec.IgnoreDifferences = []ResourceIgnoreDifferences{c.rule}
			app.Spec.SyncPolicy = &SyncPolicy{SyncOptions: c.options}
			if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
				t.Fatalf("first sync: %v %s", err, res.Summary())
			}
			refreshUntil(t, e, app, "Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })

			cs := kubernetes.NewForConfigOrDie(cluster.Config())
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cfg", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cm.Data["stable"], cm.Data["volatile"] = "drifted", "drifted"
			if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{FieldManager: "someone"}); err != nil {
				t.Fatal(err)
			}
			st := refreshUntil(t, e, app, "drift of stable seen", func(s appstatus.Status) bool { return s.Sync == appstatus.OutOfSync })
			text := st.Resources[0].Diff
			if !strings.Contains(text, "stable") {
				t.Fatalf("the diff does not show stable: %q", text)
			}
			note := strings.Contains(text, "ignored field(s) /data/volatile")
			if note == c.respect {
				t.Fatalf("respect %v, the diff's note on volatile present %v:\n%s", c.respect, note, text)
			}

			if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
				t.Fatalf("heal: %v %s", err, res.Summary())
			}
			cm, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, "cfg", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantVolatile := "git"
			if c.respect {
				wantVolatile = "drifted"
			}
			if cm.Data["stable"] != "git" || cm.Data["volatile"] != wantVolatile {
				t.Fatalf("after the heal: %v (volatile should be %q)", cm.Data, wantVolatile)
			}
			refreshUntil(t, e, app, "Synced after the heal", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
			// The step after: a second sync writes nothing.
			res, err := e.Sync(ctx, app, SyncRequest{})
			if err != nil || res.Phase != sync.Succeeded || res.Results[0].Action != sync.Unchanged {
				t.Fatalf("second sync: %v %s", err, res.Summary())
			}
		})
	}
}

// With ignoreDifferences on /spec/replicas and RespectIgnoreDifferences, a
// sync that changes a Deployment leaves the replicas an autoscaler set
// through the scale subresource alone.
func TestRespectIgnoreDifferencesLeavesScaledReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	e := newEngine(t, nil)
	dir := repoDir(t, map[string]string{"app/web.yaml": webApp})
	app := dirApp(ns, dir, ns)
	app.Spec.IgnoreDifferences = []ResourceIgnoreDifferences{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}}
	app.Spec.SyncPolicy = &SyncPolicy{SyncOptions: []string{"RespectIgnoreDifferences=true"}}
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("first sync: %v %s", err, res.Summary())
	}
	cs := kubernetes.NewForConfigOrDie(cluster.Config())
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 3}}
	if _, err := cs.AppsV1().Deployments(ns).UpdateScale(ctx, "web", scale, metav1.UpdateOptions{FieldManager: "hpa-like"}); err != nil {
		t.Fatal(err)
	}
	// Git changes the Deployment: the sync must write it, replicas aside.
	testfiles.Write(t, dir, map[string]string{"app/web.yaml": strings.Replace(webApp, "metadata: {name: web}", "metadata: {name: web, labels: {rev: two}}", 1)})
	st := refreshUntil(t, e, app, "the label change seen", func(s appstatus.Status) bool { return s.Sync == appstatus.OutOfSync })
	for _, r := range st.Resources {
		if strings.Contains(r.Diff, "replicas") {
			t.Fatalf("the diff shows replicas:\n%s", r.Diff)
		}
	}
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 3 || d.Labels["rev"] != "two" {
		t.Fatalf("after the sync: replicas %d, labels %v", *d.Spec.Replicas, d.Labels)
	}
	refreshUntil(t, e, app, "Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
}

// TestScaledReplicasWithoutARuleAreDrift: replicas an autoscaler set
// through the scale subresource, with no ignore rule, are what the next
// (force-conflicts) sync resets, so the comparison reports them: OutOfSync
// with replicas in the diff, and the sync then resets them.
func TestScaledReplicasWithoutARuleAreDrift(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	e := newEngine(t, nil)
	app := dirApp(ns, repoDir(t, map[string]string{"app/web.yaml": webApp}), ns)
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("first sync: %v %s", err, res.Summary())
	}
	refreshUntil(t, e, app, "Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
	cs := kubernetes.NewForConfigOrDie(cluster.Config())
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 3}}
	if _, err := cs.AppsV1().Deployments(ns).UpdateScale(ctx, "web", scale, metav1.UpdateOptions{FieldManager: "hpa-like"}); err != nil {
		t.Fatal(err)
	}
	st := refreshUntil(t, e, app, "the scaled replicas seen as drift", func(s appstatus.Status) bool { return s.Sync == appstatus.OutOfSync })
	shown := false
	for _, r := range st.Resources {
		shown = shown || strings.Contains(r.Diff, "replicas")
	}
	if !shown {
		t.Fatalf("OutOfSync without replicas in any diff: %+v", st.Resources)
	}
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	if d, _ := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); *d.Spec.Replicas != 1 {
		t.Fatalf("replicas %d after the sync, want Git's 1", *d.Spec.Replicas)
	}
	refreshUntil(t, e, app, "Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
}
