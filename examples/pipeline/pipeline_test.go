package pipeline_test

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// repoDir is the manifests repository under test: in your repository, the
// root ("../.." from where you put these files, or "." at the root).
const repoDir = "testdata/repo"

// Every app renders, and every object it renders passes every rule.
func TestPolicy(t *testing.T) {
	e := offlineEngine(t)
	for _, app := range loadApps(t, repoDir) {
		t.Run(app.Name, func(t *testing.T) {
			objs := renderApp(t, e, &app)
			if len(objs) == 0 {
				t.Fatalf("app %s renders no objects", app.Name)
			}
			for _, v := range violations(&app, objs) {
				t.Error(v)
			}
		})
	}
}

// Each rule catches what it is meant to, and nothing else: testdata/bad
// breaks every rule on purpose.
func TestRulesCatchBadManifests(t *testing.T) {
	e := offlineEngine(t)
	apps := loadApps(t, "testdata/bad/repo")
	got := violations(&apps[0], renderApp(t, e, &apps[0]))
	want := []string{
		`app careless: apps/Deployment team-a/no-limits: [resources] container "api" sets no memory request`,
		`app careless: apps/Deployment team-a/no-limits: [resources] container "api" sets no cpu limit`,
		`app careless: apps/Deployment team-a/no-limits: [resources] container "api" sets no memory limit`,
		`app careless: apps/Deployment team-a/floating: [pinned-images] container "migrate" runs "registry.example.com:5000/migrate": pin a version`,
		`app careless: apps/Deployment team-a/floating: [pinned-images] container "web" runs "nginx:latest": pin a version`,
		`app careless: ConfigMap kube-system/settings: [namespace] is in namespace "kube-system", not the app's "team-a"`,
		`app careless: Secret team-a/db-password: [no-secrets] is a Secret: keep secret values out of Git`,
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// Git against the recorded live state: everything is in sync but the
// Deployment someone edited by hand and the Secret that left Git, and no
// diff shows a Secret's value.
func TestLiveState(t *testing.T) {
	ctx := context.Background()
	live := loadLive(t, "testdata/live")
	opts := diff.DefaultOptions()
	// The engine applies server-side, so compare as server-side apply
	// would merge, using the live objects' managedFields (offline: the
	// built-in kinds' schemas ship with the diff package).
	opts.Mode = diff.ModeStructuredMerge
	differ, err := diff.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	tracking := resource.DefaultTracking()
	e := offlineEngine(t)

	status := map[string]string{} // object -> Synced, OutOfSync, Missing or Extraneous
	texts := map[string]string{}  // object -> unified diff of what a sync would change
	record := func(app string, res diff.Result) {
		state := "Synced"
		switch {
		case res.Missing:
			state = "Missing"
		case res.Extraneous:
			state = "Extraneous"
		case res.Modified:
			state = "OutOfSync"
		}
		status[res.Key.String()], texts[res.Key.String()] = state, res.Text
		if state != "Synced" {
			t.Logf("app %s: %s is %s:\n%s", app, res.Key, state, res.Text)
		}
	}
	for _, app := range loadApps(t, repoDir) {
		desired := map[resource.Key]bool{}
		for _, obj := range renderApp(t, e, &app) {
			defaultNamespace(obj, app.Spec.Destination.Namespace)
			key := resource.KeyOf(obj)
			desired[key] = true
			res, err := differ.Diff(ctx, obj, live[key]) // no live object: Missing
			if err != nil {
				t.Fatalf("app %s: %v", app.Name, err) // names the object
			}
			record(app.Name, res)
		}
		// Live objects tracked as the app's that Git no longer has: a
		// sync with prune would delete them.
		for key, obj := range live {
			if tracking.AppOf(obj) == app.Name && !desired[key] {
				res, err := differ.Diff(ctx, nil, obj)
				if err != nil {
					t.Fatalf("app %s: %v", app.Name, err)
				}
				record(app.Name, res)
			}
		}
	}

	want := map[string]string{
		"apps/Deployment shop/guestbook-ui": "OutOfSync",
		"Secret shop/guestbook-db":          "Extraneous",
	}
	if len(status) != 10 {
		t.Errorf("compared %d objects, want the 9 of Git and 1 live-only: %v", len(status), status)
	}
	for key, got := range status {
		if w := cmp.Or(want[key], "Synced"); got != w {
			t.Errorf("%s is %s, want %s:\n%s", key, got, w, texts[key])
		}
	}
	// The drift reads as what a sync would undo: the hand edits go back.
	drift := texts["apps/Deployment shop/guestbook-ui"]
	for _, line := range []string{"-  replicas: 4", "+  replicas: 2", "-        image: ghcr.io/example/guestbook-ui:1.4.3-hotfix", "+        image: ghcr.io/example/guestbook-ui:1.4.2"} {
		if !strings.Contains(drift, line+"\n") {
			t.Errorf("drift of guestbook-ui lacks %q:\n%s", line, drift)
		}
	}
	// A Secret's value never reaches a diff, plain or base64.
	for key, text := range texts {
		for _, secret := range []string{"hunter2-do-not-print", "aHVudGVyMi1kby1ub3QtcHJpbnQ="} {
			if strings.Contains(text, secret) {
				t.Errorf("diff of %s shows a Secret value", key)
			}
		}
	}
	if !strings.Contains(texts["Secret shop/guestbook-db"], "password:") {
		t.Errorf("diff of the live-only Secret should still name its keys:\n%s", texts["Secret shop/guestbook-db"])
	}
}

// loadLive decodes every file of dir into live objects by key.
func loadLive(t *testing.T, dir string) map[resource.Key]*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no live state in %s: %v", dir, err)
	}
	out := map[resource.Key]*unstructured.Unstructured{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := resource.Decode(f, data, resource.DefaultDecodeOptions()) // errors name file and line
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objs {
			out[resource.KeyOf(obj)] = obj
		}
	}
	return out
}

// defaultNamespace puts a namespaced object without a namespace in the
// app's, as the engine does; add your cluster-scoped kinds to the list.
func defaultNamespace(obj *unstructured.Unstructured, ns string) {
	switch obj.GetKind() {
	case "Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "PersistentVolume", "StorageClass":
		return
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(ns)
	}
}
