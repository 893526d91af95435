package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/sync"
)

// A destination naming its cluster is checked against the project's
// destinations with that cluster's server too, and one by server with the
// cluster's name, as Argo CD resolves the cluster first: the app by name
// in a project listing the server passes CheckApplication, refreshes
// without an InvalidSpecError and syncs (every object admitted); the
// other way round passes too; a namespace the project does not allow and
// an unknown project are still refused.
func TestDestinationByNameMatchesTheProjectsServer(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/web.yaml": webApp})
	byServer := Project{Spec: ProjectSpec{SourceRepos: []string{"*"},
		Destinations: []ApplicationDestination{{Server: "https://kubernetes.default.svc", Namespace: ns}}}}
	byServer.Name = "by-server"
	byName := Project{Spec: ProjectSpec{SourceRepos: []string{"*"},
		Destinations: []ApplicationDestination{{Name: "in-cluster", Namespace: ns}}}}
	byName.Name = "by-name"
	e := newEngine(t, func(o *Options) { o.Projects = []Project{byServer, byName} })
	ctx := context.Background()

	app := dirApp(ns, dir, ns)
	app.Spec.Project = "by-server"
	app.Spec.Destination = ApplicationDestination{Name: "in-cluster", Namespace: ns}
	if err := e.CheckApplication(app); err != nil {
		t.Fatalf("by name, project by server: %v", err)
	}
	st, err := e.Refresh(ctx, app)
	if err != nil || st.Sync != appstatus.OutOfSync {
		t.Fatalf("refresh: %v %s %+v", err, st.Sync, st.Conditions)
	}
	res, err := e.Sync(ctx, app, SyncRequest{})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	if app.Spec.Destination.Server != "" {
		t.Errorf("the engine changed the app's destination: %+v", app.Spec.Destination)
	}

	other := dirApp(ns+"-s", dir, ns)
	other.Spec.Project = "by-name"
	if err := e.CheckApplication(other); err != nil {
		t.Errorf("by server, project by name: %v", err)
	}
	bad := *app
	bad.Spec.Destination.Namespace = "kube-system"
	if err := e.CheckApplication(&bad); !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), "destinations") {
		t.Errorf("kube-system: %v, want refused by the project's destinations", err)
	}
	bad.Spec.Project = "nope"
	if err := e.CheckApplication(&bad); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown project: %v", err)
	}
}
