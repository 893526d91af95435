package appsets_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/appsets"
)

// dirSet is a git-directories set: one app per folder of apps/, named
// FOLDER-SUFFIX, deploying the folder into dest, automated, with the
// resources finalizer; extra is appended to its spec.
func dirSet(name, suffix, url, dest, generatorExtra, extra string) string {
	return fmt.Sprintf(`
metadata: {name: %s}
spec:
  generators:
  - git:
      repoURL: %s
      revision: main
      directories: [{path: 'apps/*'}]
%s
  template:
    metadata:
      name: '{{path.basename}}-%s'
      finalizers: [resources-finalizer.argocd.argoproj.io]
    spec:
      project: default
      source: {repoURL: %s, targetRevision: main, path: '{{path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: %s}
      syncPolicy: {automated: {prune: true}}
%s`, name, url, generatorExtra, suffix, url, dest, extra)
}

// TestGitDirectoriesSet: a git-directories set on a real Git server
// creates one Application per folder; a commit adding a folder adds one
// (seen at once through the refresh annotation by one set, at its
// requeueAfterSeconds by the other); a commit removing a folder deletes
// its Application, and through its resources finalizer its objects, under
// applicationsSync sync, and keeps it under create-update.
func TestGitDirectoriesSet(t *testing.T) {
	t.Parallel()
	// Branches are resolved again within a second, so a set coming back
	// at its requeueAfterSeconds sees a push.
	e := start(t, func(o *gitops.Options) { o.RefCacheTTL = time.Second })
	url := e.repo(t, "dirs", map[string]string{"apps/one/cm.yaml": configMap("one"), "apps/two/cm.yaml": configMap("two"), "README.md": "apps\n"})
	destSync, destKeep := cluster.TestNamespace(t), cluster.TestNamespace(t)
	e.createSet(t, dirSet("sync", "sync", url, destSync, "", ""))
	e.createSet(t, dirSet("keep", "keep", url, destKeep, "      requeueAfterSeconds: 2", "  syncPolicy: {applicationsSync: create-update}"))
	e.waitSynced(t, "one-sync", "two-sync", "one-keep", "two-keep")

	e.commit(t, "dirs", "add three", map[string]string{"apps/three/cm.yaml": configMap("three")})
	e.patch(t, &v1alpha1.ApplicationSet{}, "sync", fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, appsets.AnnotationRefresh))
	e.waitSynced(t, "three-sync", "three-keep")
	if !e.configMapExists(t, destSync, "three") || !e.configMapExists(t, destKeep, "three") {
		t.Fatal("the added folder's ConfigMaps are missing")
	}
	eventually(t, "the refresh annotation removed", func() (bool, string) {
		s := e.set(t, "sync")
		_, has := s.Annotations[appsets.AnnotationRefresh]
		return !has, fmt.Sprint(s.Annotations)
	})

	// Folder two goes, folder four comes (so that keep's four shows it
	// generated after the commit).
	e.commit(t, "dirs", "drop two, add four", map[string]string{"apps/two/cm.yaml": "", "apps/four/cm.yaml": configMap("four")})
	e.patch(t, &v1alpha1.ApplicationSet{}, "sync", fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, appsets.AnnotationRefresh))
	e.waitSynced(t, "four-sync", "four-keep")
	e.waitGone(t, "two-sync")
	eventually(t, "two-sync's ConfigMap deleted with it", func() (bool, string) {
		return !e.configMapExists(t, destSync, "two"), "ConfigMap two still exists"
	})
	keep := e.set(t, "keep")
	if a := e.app(t, "two-keep"); a == nil || !ownedBy(a, keep) || a.DeletionTimestamp != nil {
		t.Fatalf("create-update deleted two-keep: %+v", a)
	}
	if !e.configMapExists(t, destKeep, "two") {
		t.Fatal("two-keep's ConfigMap was deleted")
	}
	eventually(t, "the sets' status", func() (bool, string) {
		s, k := e.set(t, "sync"), e.set(t, "keep")
		sc, _ := condition(s, appsets.ConditionResourcesUpToDate)
		kc, _ := condition(k, appsets.ConditionResourcesUpToDate)
		return sc.Status == "True" && kc.Status == "True" && s.Status.ResourcesCount == 3 && k.Status.ResourcesCount == 4,
			fmt.Sprintf("sync %+v; keep %+v", s.Status, k.Status)
	})
}

// TestGeneratorFailureDeletesNothing: when a set's git generator fails (its
// repository is gone from the server's URL), the Applications it generated
// stay, and the status says which set and generator failed.
func TestGeneratorFailureDeletesNothing(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	url := e.repo(t, "fails", map[string]string{"apps/one/cm.yaml": configMap("one"), "apps/two/cm.yaml": configMap("two")})
	dest := cluster.TestNamespace(t)
	e.createSet(t, dirSet("failing", "f", url, dest, "", ""))
	e.waitSynced(t, "one-f", "two-f")

	missing := strings.TrimSuffix(url, "fails.git") + "missing.git"
	e.patch(t, &v1alpha1.ApplicationSet{}, "failing", fmt.Sprintf(`{"spec":{"generators":[{"git":{"repoURL":%q,"revision":"main","directories":[{"path":"apps/*"}]}}]}}`, missing))
	var last *v1alpha1.ApplicationSet
	eventually(t, "ErrorOccurred naming the set and the generator", func() (bool, string) {
		last = e.set(t, "failing")
		c, _ := condition(last, appsets.ConditionErrorOccurred)
		p, _ := condition(last, appsets.ConditionParametersGenerated)
		return c.Status == "True" && c.Reason == appsets.ReasonParamsGenerationError && p.Status == "False" &&
			strings.Contains(c.Message, `applicationset "failing"`) && strings.Contains(c.Message, "generators[0] (git)"), fmt.Sprintf("%+v", last.Status)
	})
	for _, n := range []string{"one-f", "two-f"} {
		if a := e.app(t, n); a == nil || a.DeletionTimestamp != nil {
			t.Fatalf("%s was deleted after a failed generation", n)
		}
	}
	if last.Status.ResourcesCount != 2 || !e.configMapExists(t, dest, "one") || !e.configMapExists(t, dest, "two") {
		t.Fatalf("after a failed generation: %+v", last.Status)
	}
}
