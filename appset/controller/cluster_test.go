package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	gitops "github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func cmFile(name string) []byte {
	return []byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {k: v}\n", name))
}

// dirSet is a git-directories ApplicationSet: one app per folder of apps/,
// deploying the folder into ns, automated, with the resources-finalizer.
func dirSet(t *testing.T, name, url, branch, ns, syncPolicy string) appset.ApplicationSet {
	t.Helper()
	sets, err := appset.Load(strings.NewReader(fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: %[1]s}
spec:
  generators:
  - git:
      repoURL: %[2]s
      revision: %[3]s
      directories: [{path: 'apps/*'}]
  template:
    metadata:
      name: '{{path.basename}}-%[1]s'
      finalizers: [resources-finalizer.argocd.argoproj.io]
    spec:
      project: default
      source: {repoURL: %[2]s, targetRevision: %[3]s, path: '{{path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: %[4]s}
      syncPolicy: {automated: {prune: true}}
%[5]s`, name, url, branch, ns, syncPolicy)))
	if err != nil {
		t.Fatal(err)
	}
	return sets[0]
}

// TestAppSetGitDirectoriesOnCluster: a git-directories set on a real Git
// server creates one app per folder; a commit adding a folder adds an app
// (seen through Hint, the interval being an hour); a commit deleting a
// folder deletes the app and its objects under syncPolicy sync with the
// resources-finalizer, keeps the app under create-update, and keeps the
// objects under preserveResourcesOnDeletion.
func TestAppSetGitDirectoriesOnCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gs := testfiles.GitServer(t, gitserver.DefaultOptions())
	if _, err := gs.CreateRepository(ctx, "sets", fstest.MapFS{
		"apps/one/cm.yaml": {Data: cmFile("one")},
		"apps/two/cm.yaml": {Data: cmFile("two")},
		"README.md":        {Data: []byte("apps\n")},
	}); err != nil {
		t.Fatal(err)
	}
	url, branch := gs.RepoURL("sets"), gs.Branch()
	nsDel, nsKeep, nsPres := cluster.TestNamespace(t), cluster.TestNamespace(t), cluster.TestNamespace(t)
	e := newEngine(t, func(o *gitops.Options) { o.Interval = time.Hour })
	startRun(t, e)
	eventually(t, time.Minute, "Run running", func() bool { return e.Apps().Running() })
	sets := []appset.ApplicationSet{
		dirSet(t, "del", url, branch, nsDel, ""),
		dirSet(t, "keep", url, branch, nsKeep, "  syncPolicy: {applicationsSync: create-update}\n"),
		dirSet(t, "pres", url, branch, nsPres, "  syncPolicy: {preserveResourcesOnDeletion: true}\n"),
	}
	ctl := startAppSets(t, e, sets, DefaultOptions())
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	exists := func(ns, name string) bool {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil
	}
	healthy := func(names ...string) func() bool {
		return func() bool {
			for _, n := range names {
				st, ok := e.Apps().AppStatus(v1alpha1.AppKey{Name: n})
				if !ok || st.Sync != appstatus.Synced || st.Health.Code != health.Healthy {
					return false
				}
			}
			return true
		}
	}
	eventually(t, 2*time.Minute, "one app per folder, Synced", healthy("one-del", "two-del", "one-keep", "two-keep", "one-pres", "two-pres"))
	if got := e.Apps().ManagedApps(); len(got) != 6 {
		t.Fatalf("managed apps %v, want 6", got)
	}
	if st, _ := ctl.Status("", "del"); st.Err != nil || !slices.Equal(appNames(st.Applications), []string{"one-del", "two-del"}) {
		t.Fatalf("status of del: %+v", st)
	}

	// A commit adds a folder: one more app per set.
	if _, err := gs.Commit(ctx, "sets", "add three", map[string][]byte{"apps/three/cm.yaml": cmFile("three")}); err != nil {
		t.Fatal(err)
	}
	e.Apps().Hint(url)
	eventually(t, 2*time.Minute, "the added folder's apps Synced", healthy("three-del", "three-keep", "three-pres"))
	if !exists(nsDel, "three") {
		t.Fatal("the added app's ConfigMap is missing")
	}

	// A commit deletes a folder.
	if _, err := gs.Commit(ctx, "sets", "drop two", map[string][]byte{"apps/two/cm.yaml": nil}); err != nil {
		t.Fatal(err)
	}
	e.Apps().Hint(url)
	eventually(t, 2*time.Minute, "the deleted folder's app gone under sync, with its objects", func() bool {
		st, _ := ctl.Status("", "del")
		return !slices.Contains(managedSorted(e), "two-del") && !exists(nsDel, "two") && len(st.Deleting) == 0
	})
	eventually(t, time.Minute, "the preserved app gone, objects kept", func() bool {
		return !slices.Contains(managedSorted(e), "two-pres")
	})
	if !exists(nsPres, "two") {
		t.Fatal("preserveResourcesOnDeletion: the ConfigMap was deleted")
	}
	// create-update never deletes: the app stays managed and Synced (its
	// spec still names the folder; the render is empty, so pruning
	// removes the object, as Argo CD's app would).
	before, _ := ctl.Status("", "keep")
	e.Apps().Hint(url)
	eventually(t, time.Minute, "the keep set generated again", func() bool {
		st, _ := ctl.Status("", "keep")
		return st.Reconciles > before.Reconciles
	})
	if st, _ := ctl.Status("", "keep"); !slices.Contains(appNames(st.Applications), "two-keep") || !slices.Contains(managedSorted(e), "two-keep") {
		t.Fatalf("create-update deleted an app: %+v, managed %v", st, e.Apps().ManagedApps())
	}
	// The step after: the remaining apps stay Synced and the set reports
	// no error.
	eventually(t, time.Minute, "remaining apps Synced", healthy("one-del", "three-del", "one-pres"))
	if st, _ := ctl.Status("", "del"); st.Err != nil || !slices.Equal(appNames(st.Applications), []string{"one-del", "three-del"}) {
		t.Fatalf("status of del after the deletion: %+v", st)
	}
}

// TestAppSetRollingSyncWaitsForHealth: three steps by label; the first
// step's app deploys a Deployment no node can run (Progressing), so the
// second step does not start; a commit fixes it, and the steps then roll
// out in order, each after the previous one is Healthy.
func TestAppSetRollingSyncWaitsForHealth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gs := testfiles.GitServer(t, gitserver.DefaultOptions())
	deploy := func(selector string) []byte {
		return []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
` + selector + `      containers: [{name: web, image: nginx}]
`)
	}
	if _, err := gs.CreateRepository(ctx, "roll", fstest.MapFS{
		"dev/web.yaml":    {Data: deploy("      nodeSelector: {no-such-node: \"true\"}\n")},
		"staging/cm.yaml": {Data: cmFile("staging")},
		"prod/cm.yaml":    {Data: cmFile("prod")},
	}); err != nil {
		t.Fatal(err)
	}
	url, branch := gs.RepoURL("roll"), gs.Branch()
	ns := cluster.TestNamespace(t)
	sets, err := appset.Load(strings.NewReader(fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: roll}
spec:
  goTemplate: true
  generators:
  - list:
      elements: [{env: dev}, {env: staging}, {env: prod}]
  strategy:
    type: RollingSync
    rollingSync:
      steps:
      - matchExpressions: [{key: env, operator: In, values: [dev]}]
      - matchExpressions: [{key: env, operator: In, values: [staging]}]
        maxUpdate: 1
      - matchExpressions: [{key: env, operator: In, values: [prod]}]
        maxUpdate: 50%%
  template:
    metadata:
      name: 'web-{{.env}}'
      labels: {env: '{{.env}}'}
    spec:
      source: {repoURL: %s, targetRevision: %s, path: '{{.env}}'}
      destination: {server: https://kubernetes.default.svc, namespace: %s}
      syncPolicy: {automated: {prune: true, selfHeal: true}}
`, url, branch, ns)))
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, func(o *gitops.Options) { o.Interval = time.Hour })
	startRun(t, e)
	eventually(t, time.Minute, "Run running", func() bool { return e.Apps().Running() })
	opts := DefaultOptions()
	opts.RolloutPoll = 100 * time.Millisecond
	ctl := startAppSets(t, e, sets, opts)
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	cmExists := func(name string) bool {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	// Step 0 syncs dev, which stays Progressing.
	eventually(t, 2*time.Minute, "dev synced and Progressing", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.AppKey{Name: "web-dev"})
		return ok && st.Sync == appstatus.Synced && st.Health.Code == health.Progressing
	})
	before, _ := ctl.Status("", "roll")
	eventually(t, time.Minute, "five more rollout rounds", func() bool {
		st, _ := ctl.Status("", "roll")
		return st.Reconciles >= before.Reconciles+5
	})
	if st, _ := ctl.Status("", "roll"); st.Step != 0 || cmExists("staging") || cmExists("prod") {
		t.Fatalf("a later step started while dev is not Healthy: %+v (staging %v, prod %v)", st, cmExists("staging"), cmExists("prod"))
	}
	if st, _ := e.Apps().AppStatus(v1alpha1.AppKey{Name: "web-staging"}); st.Sync != appstatus.OutOfSync {
		t.Fatalf("staging: %s, want OutOfSync (automated sync is off under RollingSync)", st.Sync)
	}

	// A commit lets dev run; the rollout then goes step by step.
	if _, err := gs.Commit(ctx, "roll", "schedulable", map[string][]byte{"dev/web.yaml": deploy("")}); err != nil {
		t.Fatal(err)
	}
	e.Apps().Hint(url)
	var devHealthy, stagingHealthy, stagingSynced, prodSynced time.Time
	eventually(t, 3*time.Minute, "all three steps rolled out", func() bool {
		now := time.Now()
		if ctl.appDone(v1alpha1.AppKey{Name: "web-dev"}) && devHealthy.IsZero() {
			devHealthy = now
		}
		if ctl.appDone(v1alpha1.AppKey{Name: "web-staging"}) && stagingHealthy.IsZero() {
			stagingHealthy = now
		}
		if cmExists("staging") && stagingSynced.IsZero() {
			stagingSynced = now
		}
		if cmExists("prod") && prodSynced.IsZero() {
			prodSynced = now
		}
		return !prodSynced.IsZero() && ctl.appDone(v1alpha1.AppKey{Name: "web-prod"})
	})
	if devHealthy.IsZero() || stagingSynced.Before(devHealthy) || stagingHealthy.IsZero() || prodSynced.Before(stagingHealthy) {
		t.Fatalf("out of order: dev Healthy %v, staging synced %v, staging Healthy %v, prod synced %v", devHealthy, stagingSynced, stagingHealthy, prodSynced)
	}
	eventually(t, time.Minute, "the rollout finished", func() bool {
		st, _ := ctl.Status("", "roll")
		return st.Step == -1 && st.Err == nil
	})
}

// TestAppSetFailedGeneratorDeletesNothing: Argo CD's safety rule in the
// engine. A commit that removes one config file and breaks another makes
// the git files generator fail: no app is deleted and the set reports the
// error naming the file; the commit that repairs the file deletes the app
// whose file is gone.
func TestAppSetFailedGeneratorDeletesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gs := testfiles.GitServer(t, gitserver.DefaultOptions())
	if _, err := gs.CreateRepository(ctx, "conf", fstest.MapFS{
		"conf/a.json":    {Data: []byte(`{"app": "a"}`)},
		"conf/b.json":    {Data: []byte(`{"app": "b"}`)},
		"deploy/cm.yaml": {Data: cmFile("c")},
	}); err != nil {
		t.Fatal(err)
	}
	url, branch := gs.RepoURL("conf"), gs.Branch()
	ns := cluster.TestNamespace(t)
	sets, err := appset.Load(strings.NewReader(fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: files}
spec:
  generators:
  - git: {repoURL: %[1]s, revision: %[2]s, files: [{path: 'conf/*.json'}]}
  template:
    metadata: {name: 'files-{{app}}'}
    spec:
      source: {repoURL: %[1]s, targetRevision: %[2]s, path: deploy}
      destination: {server: https://kubernetes.default.svc, namespace: '%[3]s-{{app}}'}
`, url, branch, ns)))
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, func(o *gitops.Options) { o.Interval = time.Hour })
	startRun(t, e)
	eventually(t, time.Minute, "Run running", func() bool { return e.Apps().Running() })
	ctl := startAppSets(t, e, sets, DefaultOptions())
	owns := func(names ...string) func() bool {
		return func() bool {
			st, _ := ctl.Status("", "files")
			return slices.Equal(appNames(st.Applications), names)
		}
	}
	eventually(t, time.Minute, "two apps", owns("files-a", "files-b"))

	before, _ := ctl.Status("", "files")
	if _, err := gs.Commit(ctx, "conf", "break", map[string][]byte{"conf/a.json": nil, "conf/b.json": []byte("{broken")}); err != nil {
		t.Fatal(err)
	}
	e.Apps().Hint(url)
	eventually(t, time.Minute, "the failed generation reported", func() bool {
		st, _ := ctl.Status("", "files")
		return st.Reconciles > before.Reconciles && st.Err != nil
	})
	st, _ := ctl.Status("", "files")
	var ge *appset.Error
	if !errors.As(st.Err, &ge) || ge.Set != "files" || ge.Generator != 0 || !strings.Contains(st.Err.Error(), "conf/b.json") {
		t.Fatalf("status error %v", st.Err)
	}
	if !slices.Equal(appNames(st.Applications), []string{"files-a", "files-b"}) || !slices.Contains(managedSorted(e), "files-a") {
		t.Fatalf("a failed generator deleted apps: %+v, managed %v", st, e.Apps().ManagedApps())
	}

	if _, err := gs.Commit(ctx, "conf", "repair", map[string][]byte{"conf/b.json": []byte(`{"app": "b"}`)}); err != nil {
		t.Fatal(err)
	}
	e.Apps().Hint(url)
	eventually(t, time.Minute, "the app whose file is gone deleted after the repair", owns("files-b"))
	if st, _ := ctl.Status("", "files"); st.Err != nil || slices.Contains(managedSorted(e), "files-a") {
		t.Fatalf("after the repair: %+v, managed %v", st, e.Apps().ManagedApps())
	}
}
