package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/sync"
)

// TestProjectSourceNamespaces: an Application in a namespace other than
// the control plane's may use a project only when its sourceNamespaces
// list that namespace (Argo CD's apps in any namespace), by a glob or by
// a regular expression between slashes; it was accepted and ignored.
func TestProjectSourceNamespaces(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	proj := Project{Spec: ProjectSpec{SourceRepos: []string{"*"}, SourceNamespaces: []string{"team-*", "/^ops-[0-9]+$/"},
		Destinations: []ApplicationDestination{{Server: "*", Namespace: "*"}}}}
	proj.Name = "shared"
	e := newEngine(t, func(o *Options) { o.Projects = []Project{proj} })
	dir := repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	for _, c := range []struct {
		namespace string
		allowed   bool
	}{{"", true}, {"argocd", true}, {"team-payments", true}, {"ops-42", true}, {"other", false}, {"ops-x", false}} {
		app := dirApp(ns, dir, ns)
		app.Namespace = c.namespace
		app.Spec.Project = "shared"
		_, err := e.Refresh(context.Background(), app)
		if c.allowed && err != nil {
			t.Errorf("namespace %q: %v", c.namespace, err)
		}
		if !c.allowed {
			if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), "sourceNamespaces") {
				t.Errorf("namespace %q: %v, want a sourceNamespaces refusal", c.namespace, err)
			}
			if res, err := e.Sync(context.Background(), app, SyncRequest{}); res.Phase == sync.Succeeded || !strings.Contains(err.Error(), "sourceNamespaces") {
				t.Errorf("sync from namespace %q: %s %v", c.namespace, res.Phase, err)
			}
		}
	}
}
