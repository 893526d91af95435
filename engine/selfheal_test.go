package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestRunSelfHealIsNamedAndItsBackoffAnnounced: a self-heal's SyncStarted
// says it heals a drift (not a new commit) and which self-heal in a row it
// is, the operation records that number (Argo CD's autoHealAttemptsCount),
// and a drift met inside the backoff is announced once with the attempt
// to come and when, before that attempt runs.
func TestRunSelfHealIsNamedAndItsBackoffAnnounced(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n"})
	notes := &noteLog{}
	e := newEngine(t, func(o *Options) { o.Interval = time.Minute; o.Notify = notes.add })
	app := automated(dirApp("healer", dir, ns))
	startRun(t, e, app)
	eventually(t, time.Minute, "Synced", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		return ok && st.Sync == appstatus.Synced
	})
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	drift := func() {
		t.Helper()
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["k"] = "drifted"
		if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	started := func(attempt int) *appstatus.Notification {
		notes.mu.Lock()
		defer notes.mu.Unlock()
		for _, n := range notes.notes {
			if n.Type == appstatus.NotifySyncStarted && n.SelfHealAttempt == attempt {
				return &n
			}
		}
		return nil
	}
	first := started(0)
	if first == nil || first.Message != "Initiated automated sync to '"+first.Revision+"'" {
		t.Fatalf("the first automated sync's SyncStarted: %+v", first)
	}
	drift()
	eventually(t, time.Minute, "self-heal 1", func() bool { return started(1) != nil })
	if msg := started(1).Message; !strings.Contains(msg, "(self-heal attempt 1: the live state drifted") {
		t.Fatalf("self-heal SyncStarted message %q does not say it is a self-heal", msg)
	}
	eventually(t, time.Minute, "Synced after self-heal 1", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		return ok && st.Sync == appstatus.Synced && started(1) != nil
	})
	// Drift again at once: self-heal 2 waits 6 s (2 s times 3) from the
	// start of self-heal 1, and says so before it runs.
	drift()
	eventually(t, time.Minute, "self-heal 2", func() bool { return started(2) != nil })
	notes.mu.Lock()
	// (Self-heal 1 may have waited too, when the drift came within 2 s
	// of the first sync: only the second is sure to.)
	var announced []appstatus.Notification
	for _, n := range notes.notes {
		if n.Type == appstatus.NotifySelfHealBackoff && n.SelfHealAttempt == 2 {
			announced = append(announced, n)
		}
		if n.Type == appstatus.NotifySyncStarted && n.SelfHealAttempt == 2 {
			break
		}
	}
	notes.mu.Unlock()
	if len(announced) != 1 || !strings.Contains(announced[0].Message, "self-heal attempt 2 due at ") {
		t.Fatalf("self-heal 2's backoff announced before it ran: %+v", announced)
	}
	eventually(t, time.Minute, "self-heal 2 recorded", func() bool {
		op, err := e.LastOperation(ctx, v1alpha1.KeyOf(app))
		return err == nil && op != nil && op.FinishedAt.After(op.StartedAt) && op.SelfHealAttempt == 2 && op.Automated
	})
}
