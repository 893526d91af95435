package engine

import (
	"context"
	"errors"
	"testing"
)

// CheckSync refuses at once what Sync would refuse before it starts, with
// Sync's own error: a deny window blocks a manual sync unless manualSync
// lets it through, an automated one always; a project without windows
// allows both; an unknown project is refused. A sync it refused leaves no
// operation behind (the host never started one).
func TestCheckSyncRefusesWhatSyncRefuses(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/web.yaml": webApp})
	mk := func(name string, manual bool) Project {
		p := Project{Spec: ProjectSpec{SourceRepos: []string{"*"}, Destinations: []ApplicationDestination{{Server: "*", Namespace: "*"}},
			SyncWindows: []SyncWindow{{Kind: "deny", Schedule: "* * * * *", Duration: "1h", Applications: []string{"*"}, ManualSync: manual}}}}
		p.Name = name
		return p
	}
	open := Project{Spec: ProjectSpec{SourceRepos: []string{"*"}, Destinations: []ApplicationDestination{{Server: "*", Namespace: "*"}}}}
	open.Name = "open"
	e := newEngine(t, func(o *Options) { o.Projects = []Project{mk("deny", false), mk("deny-manual-ok", true), open} })
	app := dirApp(ns, dir, ns)
	for _, c := range []struct {
		project        string
		manual, refuse bool
	}{
		{"deny", true, true}, {"deny", false, true},
		{"deny-manual-ok", true, false}, {"deny-manual-ok", false, true},
		{"open", true, false}, {"open", false, false},
	} {
		app.Spec.Project = c.project
		err := e.CheckSync(app, c.manual)
		var we *SyncWindowError
		if c.refuse != errors.As(err, &we) || (!c.refuse && err != nil) {
			t.Errorf("project %s, manual %v: %v; want refused by the window: %v", c.project, c.manual, err, c.refuse)
		}
		if c.refuse {
			_, serr := e.Sync(context.Background(), app, SyncRequest{Manual: c.manual})
			if serr == nil || serr.Error() != err.Error() {
				t.Errorf("project %s, manual %v: Sync says %v, CheckSync %v", c.project, c.manual, serr, err)
			}
		}
	}
	app.Spec.Project = "nope"
	if err := e.CheckSync(app, true); err == nil {
		t.Error("an unknown project: allowed")
	}
}
