package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/source/repocreds"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// projectSecret is an Argo CD repository Secret of url with the Git
// server's read credentials, scoped to project ("" leaves it unscoped).
func projectSecret(t *testing.T, url, password, project string) *repocreds.Store {
	t.Helper()
	scope := ""
	if project != "" {
		scope = "\n  project: " + project
	}
	st, err := repocreds.Load("repos.yaml", []byte(fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: private, namespace: argocd, labels: {argocd.argoproj.io/secret-type: repository}}
stringData:
  url: %s
  username: reader
  password: %s%s
`, url, password, scope)))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A private repository on the real Git server and two projects: a
// repository Secret scoped to project a serves a's apps only (Argo CD's
// project-scoped repositories). An app of a syncs, and its next refresh
// says Synced; an app of b is refused with an error naming the repository
// and never the password. The same Secret unscoped serves both projects.
func TestProjectScopedRepositorySecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const password = "scoped-SECRET-pw"
	gopts := gitserver.DefaultOptions()
	gopts.ReadUsername, gopts.ReadPassword = "reader", password
	gs, commit := testfiles.GitRepo(t, gopts, "private", fstest.MapFS{
		"app/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: private}\ndata: {v: \"1\"}\n")},
	})
	url := gs.RepoURL("private")
	projects := []Project{}
	for _, name := range []string{"a", "b"} {
		projects = append(projects, Project{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: ProjectSpec{SourceRepos: []string{"*"},
			Destinations: []ApplicationDestination{{Server: "*", Namespace: "*"}}}})
	}
	appOf := func(project string) *Application {
		ns := cluster.TestNamespace(t)
		a := gitApp(ns, url, gs.Branch(), ns)
		a.Spec.SyncPolicy = nil
		a.Spec.Project = project
		return a
	}
	synced := func(e *Engine, app *Application) {
		t.Helper()
		if _, err := e.Sync(ctx, app, SyncRequest{}); err != nil {
			t.Fatalf("sync of the app of project %s: %v", app.Spec.Project, err)
		}
		// The next refresh says Synced at the commit (once the cluster
		// cache has seen the write).
		eventually(t, time.Minute, "the app of project "+app.Spec.Project+" Synced after its sync", func() bool {
			st, err := e.Refresh(ctx, app)
			return err == nil && st.Sync == appstatus.Synced && st.Revision == commit
		})
	}

	scoped := projectSecret(t, url, password, "a")
	e := newEngine(t, func(o *Options) {
		o.Projects = projects
		o.ProjectCredentials = scoped.ForProject
	})
	synced(e, appOf("a"))
	appB := appOf("b")
	_, err := e.Refresh(ctx, appB)
	if err == nil {
		t.Fatal("an app of project b read the repository with the Secret scoped to project a")
	}
	if msg := err.Error(); !strings.Contains(msg, url) || strings.Contains(msg, password) {
		t.Fatalf("the refusal must name the repository %s and never the password: %v", url, err)
	}
	if _, err := e.Sync(ctx, appB, SyncRequest{}); err == nil {
		t.Fatal("an app of project b synced with the Secret scoped to project a")
	}

	if c := e.Sources().RepoCredentials(appB, url); c != nil {
		t.Fatalf("RepoCredentials gave an app of project b the credentials of project a's Secret")
	}
	if c := e.Sources().RepoCredentials(appOf("a"), url); c == nil || c.Password != password {
		t.Fatalf("RepoCredentials of an app of project a: %v", c)
	}

	unscoped := projectSecret(t, url, password, "")
	e2 := newEngine(t, func(o *Options) {
		o.Projects = projects
		o.ProjectCredentials = unscoped.ForProject
	})
	synced(e2, appOf("a"))
	synced(e2, appOf("b"))
	// The lookup of before project scoping still serves every project.
	e3 := newEngine(t, func(o *Options) {
		o.Projects = projects
		o.Credentials = unscoped.For
	})
	synced(e3, appOf("b"))
}
