package engine

import (
	"context"
	gosync "sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
)

// statusLog is what an OnStatus subscriber saw.
type statusLog struct {
	mu  gosync.Mutex
	got []appstatus.Status
}

func (l *statusLog) add(st appstatus.Status) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, st)
}

func (l *statusLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.got)
}

// saw reports whether some delivered status has the revision and sync.
func (l *statusLog) saw(rev string, sync appstatus.SyncStatusCode) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, st := range l.got {
		if st.Revision == rev && st.Sync == sync {
			return true
		}
	}
	return false
}

// TestEngineOnStatusSeesEachRefreshUntilStopped: a new commit of an app
// that stays OutOfSync changes neither its sync nor its health, so Notify
// says nothing; an OnStatus subscriber still sees the refresh Run made at
// the new revision, and the status of a host's Refresh, and nothing after
// stop. The subscriber reads the engine from inside the callback (it is
// not called under a lock of the engine's).
func TestEngineOnStatusSeesEachRefreshUntilStopped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cm := func(v string) []byte {
		return []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: " + v + "}\n")
	}
	gs, first := testfiles.GitRepo(t, gitserver.DefaultOptions(), "status", fstest.MapFS{"app/cm.yaml": {Data: cm("one")}})
	url := gs.RepoURL("status")
	ns := cluster.TestNamespace(t)
	var nmu gosync.Mutex
	var syncChanges []appstatus.Notification
	e := newEngine(t, func(o *Options) {
		o.Interval = time.Hour
		o.Notify = func(n appstatus.Notification) {
			if n.Type == appstatus.NotifySyncStatusChanged {
				nmu.Lock()
				syncChanges = append(syncChanges, n)
				nmu.Unlock()
			}
		}
	})
	app := &Application{Spec: ApplicationSpec{
		Source:      &ApplicationSource{RepoURL: url, Path: "app", TargetRevision: gs.Branch()},
		Destination: ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
	}}
	app.Name = ns
	var log statusLog
	stop := e.Apps().OnStatus(func(key v1alpha1.AppKey, st appstatus.Status) {
		if key != v1alpha1.KeyOf(app) {
			return
		}
		_, _ = e.Apps().AppStatus(v1alpha1.KeyOf(app)) // must not deadlock
		log.add(st)
	})
	startRun(t, e, app)
	eventually(t, 2*time.Minute, "the first revision, OutOfSync, delivered", func() bool { return log.saw(first, appstatus.OutOfSync) })

	second, err := gs.Commit(ctx, "status", "change the value", map[string][]byte{"app/cm.yaml": cm("two")})
	if err != nil {
		t.Fatal(err)
	}
	e.Apps().Hint(url)
	eventually(t, time.Minute, "the second revision, still OutOfSync, delivered", func() bool { return log.saw(second, appstatus.OutOfSync) })
	nmu.Lock()
	for _, n := range syncChanges {
		if n.Revision == second {
			t.Fatalf("Notify was told of a sync change at the second revision %+v; the app stayed OutOfSync", n)
		}
	}
	nmu.Unlock()

	// A host's own Refresh is delivered before Refresh returns.
	before := log.len()
	if _, err := e.Refresh(ctx, app); err != nil {
		t.Fatal(err)
	}
	if log.len() != before+1 {
		t.Fatalf("deliveries went from %d to %d over a host's Refresh; want one more", before, log.len())
	}

	stop()
	stop() // a second stop does nothing
	after := log.len()
	third, err := gs.Commit(ctx, "status", "change it again", map[string][]byte{"app/cm.yaml": cm("three")})
	if err != nil {
		t.Fatal(err)
	}
	e.Apps().Hint(url)
	eventually(t, time.Minute, "Run at the third revision", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		return ok && st.Revision == third
	})
	if _, err := e.Refresh(ctx, app); err != nil {
		t.Fatal(err)
	}
	if n := log.len(); n != after {
		t.Fatalf("%d deliveries after stop", n-after)
	}
}
