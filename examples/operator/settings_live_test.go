package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/resource"
)

// freeAddr is a free local address for an endpoint.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// scrape reads the metrics endpoint at addr.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// updateCM changes ConfigMap ns/name with edit.
func updateCM(ctx context.Context, t *testing.T, c client.Client, ns, name string, edit func(map[string]string)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cm); err != nil {
			return false, err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		edit(cm.Data)
		return c.Update(ctx, cm) == nil, nil
	})
	if err != nil {
		t.Fatalf("update %s: %v", name, err)
	}
}

// poll waits until cond holds, failing with what.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestSettingsApplyLive changes each class of key on a running operator
// and observes its effect, without a restart: argocd-cm's
// resource.exclusions and resource.inclusions change the kinds watched
// (the app's ConfigMap is excluded, then watched again), its
// installationID re-marks what the app manages; argocd-cmd-params-cm's
// controller.log.level and .format set the log, and its metrics labels
// the series; a key read only at start (controller.status.processors)
// gets one RestartNeeded Event naming it, and an unused key one
// UnusedSetting Event, written once whatever the reconciles that follow.
func TestSettingsApplyLive(t *testing.T) {
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	ctx := context.Background()
	c := testClient(t)
	for _, name := range settingsNames {
		if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	repo := writeRepo(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello}\ndata: {a: b}\n"})
	metrics := freeAddr(t)
	op := runOperator(t, "-namespace", ns, "-metrics-bind-address", metrics, "-health-probe-bind-address", "0")
	app := createApp(ctx, t, c, ns, dest, repo)
	excluded := func(a *v1alpha1.Application) bool {
		for _, cond := range a.Status.Conditions {
			if cond.Type == "ExcludedResourceWarning" && strings.Contains(cond.Message, "hello") {
				return true
			}
		}
		return false
	}
	waitFor(t, c, app, "Synced and Healthy", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == "Synced" && a.Status.Health.Status == "Healthy" && !excluded(a)
	})

	// argocd-cm resource.exclusions: ConfigMaps are no longer watched or
	// synced; the app says its ConfigMap is excluded.
	updateCM(ctx, t, c, ns, "argocd-cm", func(d map[string]string) {
		d["resource.exclusions"] = "- apiGroups: ['']\n  kinds: [ConfigMap]\n"
	})
	waitFor(t, c, app, "reporting its ConfigMap excluded", excluded)
	updateCM(ctx, t, c, ns, "argocd-cm", func(d map[string]string) { delete(d, "resource.exclusions") })
	waitFor(t, c, app, "watching its ConfigMap again", func(a *v1alpha1.Application) bool {
		return !excluded(a) && a.Status.Sync.Status == "Synced"
	})
	// resource.inclusions: only Secrets are watched.
	updateCM(ctx, t, c, ns, "argocd-cm", func(d map[string]string) {
		d["resource.inclusions"] = "- apiGroups: ['']\n  kinds: [Secret]\n"
	})
	waitFor(t, c, app, "reporting its ConfigMap excluded by the inclusions", excluded)
	updateCM(ctx, t, c, ns, "argocd-cm", func(d map[string]string) { delete(d, "resource.inclusions") })
	waitFor(t, c, app, "watching its ConfigMap again", func(a *v1alpha1.Application) bool { return !excluded(a) })

	// application.resourceTrackingMethod annotation+label: what the app
	// manages gets the instance label too (self-heal syncs it).
	updateCM(ctx, t, c, ns, "argocd-cm", func(d map[string]string) { d["application.resourceTrackingMethod"] = "annotation+label" })
	poll(t, "the app's ConfigMap labelled by the annotation+label tracking", func() bool {
		cm := &corev1.ConfigMap{}
		return c.Get(ctx, types.NamespacedName{Namespace: dest, Name: "hello"}, cm) == nil &&
			cm.Labels[resource.DefaultTrackingLabel] == app.Name
	})

	// controller.log.level debug shows the V(1) lines; json the format.
	if strings.Contains(op.log.String(), "level=DEBUG") {
		t.Fatal("debug lines at the default info level")
	}
	updateCM(ctx, t, c, ns, "argocd-cmd-params-cm", func(d map[string]string) { d["controller.log.level"] = "debug" })
	poll(t, "debug lines in the log", func() bool { return strings.Contains(op.log.String(), "level=DEBUG") })
	updateCM(ctx, t, c, ns, "argocd-cmd-params-cm", func(d map[string]string) {
		d["controller.log.level"], d["controller.log.format"] = "info", "json"
	})
	poll(t, "JSON lines in the log", func() bool { return strings.Contains(op.log.String(), `{"time":`) })

	// controller.metrics.application.labels: argocd_app_labels carries the label.
	if err := c.Patch(ctx, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app.Name}},
		client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"blue"}}}`))); err != nil {
		t.Fatal(err)
	}
	updateCM(ctx, t, c, ns, "argocd-cmd-params-cm", func(d map[string]string) { d["controller.metrics.application.labels"] = "team" })
	want := fmt.Sprintf(`argocd_app_labels{label_team="blue",name=%q,namespace=%q,project="default"} 1`, app.Name, ns)
	poll(t, "argocd_app_labels with label_team", func() bool { return strings.Contains(scrape(t, metrics), want) })

	// A key read at start: RestartNeeded, once; an unused key: named once.
	updateCM(ctx, t, c, ns, "argocd-cmd-params-cm", func(d map[string]string) {
		d["controller.status.processors"], d["server.insecure"] = "7", "true"
	})
	notes := waitEvents(ctx, t, c, ns, "argocd-cmd-params-cm", "asking for a restart", func(n map[string][]string) bool {
		return strings.Contains(strings.Join(n[ReasonRestartNeeded], "\n"), "controller.status.processors") &&
			strings.Contains(strings.Join(n[ReasonUnusedSetting], "\n"), "server.insecure")
	})
	if strings.Contains(strings.Join(notes[ReasonRestartNeeded], "\n"), "controller.log.level") {
		t.Errorf("a live key reported as needing a restart: %q", notes[ReasonRestartNeeded])
	}
	// Reconciles that follow write no Event again.
	if err := c.Patch(ctx, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app.Name}},
		client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"argocd.argoproj.io/refresh":"hard"}}}`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, app, "refreshed", func(a *v1alpha1.Application) bool { return a.Annotations["argocd.argoproj.io/refresh"] == "" })
	_, counts := settingEvents(ctx, t, c, ns, "argocd-cmd-params-cm")
	for k, n := range counts {
		if n != 1 {
			t.Errorf("Event %q written %d times, want once", strings.ReplaceAll(k, "\x00", ": "), n)
		}
	}
}

// TestRepoErrorGracePeriod: with controller.repo.error.grace.period.seconds,
// a render that fails leaves the app's status as it was (a refresh asked
// for is done, and writes no error) until the period has passed; a hard
// refresh reports it at once, as Argo CD's controller does.
func TestRepoErrorGracePeriod(t *testing.T) {
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	ctx := context.Background()
	c := testClient(t)
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "argocd-cmd-params-cm"},
		Data: map[string]string{"controller.repo.error.grace.period.seconds": "3600"}}); err != nil {
		t.Fatal(err)
	}
	repo := writeRepo(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello}\ndata: {a: b}\n"})
	runOperator(t, "-namespace", ns, "-metrics-bind-address", "0", "-health-probe-bind-address", "0")
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ns, Annotations: map[string]string{"argocd.argoproj.io/refresh": "normal"}},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "file://" + repo, Path: "no-such-folder"},
			Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: dest}}}
	poll(t, "the Application created", func() bool { return c.Create(ctx, app.DeepCopy()) == nil })
	comparisonError := func(a *v1alpha1.Application) bool {
		for _, cond := range a.Status.Conditions {
			if cond.Type == "ComparisonError" {
				return true
			}
		}
		return false
	}
	key := types.NamespacedName{Namespace: ns, Name: ns}
	waitFor(t, c, key, "refreshed", func(a *v1alpha1.Application) bool { return a.Annotations["argocd.argoproj.io/refresh"] == "" })
	got := &v1alpha1.Application{}
	if err := c.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if comparisonError(got) {
		t.Fatalf("the render error was written within the grace period: %+v", got.Status.Conditions)
	}
	if err := c.Patch(ctx, got, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"argocd.argoproj.io/refresh":"hard"}}}`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, key, "reporting the render error after a hard refresh", comparisonError)
}
