package controller_test

import (
	"context"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/kubegitops/gitops/autosync"
	"github.com/kubegitops/gitops/examples/operator/controller"
	"k8s.io/apimachinery/pkg/util/wait"
)

// logLines keeps what a funcr logger writes.
type logLines struct {
	mu    gosync.Mutex
	lines []string
}

func (l *logLines) add(prefix, args string) {
	l.mu.Lock()
	l.lines = append(l.lines, prefix+" "+args)
	l.mu.Unlock()
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func (l *logLines) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

// TestSelfHealIsLoggedAsOne: the operator logs a self-heal as Argo CD's
// "Initiated automated sync" with which self-heal it is (not as the sync
// of a new commit), records the count in operationState
// (autoHealAttemptsCount), and while the next self-heal waits for its
// backoff logs Argo CD's "Skipping auto-sync" with the attempt to come
// and the time left.
func TestSelfHealIsLoggedAsOne(t *testing.T) {
	logs := &logLines{}
	c := newClient(t)
	ns := cluster.TestNamespace(t)
	stop := runOperatorWith(t, c, ns, nil, nil, func(o *controller.Options) {
		o.Log = funcr.New(logs.add, funcr.Options{})
		// Self-heal 1 after 1 s, self-heal 2 only 30 s after that.
		o.SelfHealBackoff = &autosync.Backoff{Duration: time.Second, Factor: 30, Cap: time.Minute}
	})
	t.Cleanup(stop)
	o := &operator{ns: ns, c: c}
	dest := cluster.TestNamespace(t)
	repo := repoDir(t, map[string]string{"app/web.yaml": webManifests})
	o.create(t, newApp(o.ns, appSpec{name: "auto", repo: repo, dest: dest, automated: true}))
	got := o.waitApp(t, "auto", "Synced and Healthy", syncedHealthy)
	rev := got.Status.Sync.Revision
	if !logs.has("Initiated automated sync to '" + rev + "'\"") {
		t.Fatalf("the first automated sync was not logged as Argo CD's \"Initiated automated sync to '%s'\":\n%s", rev, logs.String())
	}
	o.setGreeting(t, dest, "drifted")
	o.waitApp(t, "auto", "self-heal 1 recorded", func(a observed) bool {
		op := a.Status.OperationState
		return syncedHealthy(a) && op != nil && op.Operation.Sync != nil && op.Operation.Sync.SelfHealAttemptsCount == 1
	})
	if want := "Initiated automated sync to '" + rev + "' (self-heal attempt 1: the live state drifted"; !logs.has(want) {
		t.Fatalf("self-heal 1 not logged as %q:\n%s", want, logs.String())
	}
	o.setGreeting(t, dest, "drifted again")
	want := "Skipping auto-sync: self-heal backoff: already synced " + rev
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return logs.has(want) && logs.has("self-heal attempt 2 in "), nil
	})
	if err != nil {
		t.Fatalf("the self-heal backoff was not logged (%q): %v\n%s", want, err, logs.String())
	}
}
