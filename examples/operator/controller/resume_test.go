package controller_test

import (
	"context"
	"fmt"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/state"
	"github.com/kubegitops/gitops/sync"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// killableStore is the real ConfigMap state store of -state-namespace,
// which a test kills: once kill returns true for a state, that save goes
// through and every later one fails, as if the process died right after
// it (the one fault a real store cannot produce on demand).
type killableStore struct {
	*state.ConfigMapStore
	mu   gosync.Mutex
	dead bool
	kill func(state.AppState) bool
}

func (s *killableStore) Save(ctx context.Context, app string, st state.AppState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return fmt.Errorf("state of %s: the process is dead", app)
	}
	if err := s.ConfigMapStore.Save(ctx, app, st); err != nil {
		return err
	}
	if s.kill != nil && s.kill(st) {
		s.dead = true
	}
	return nil
}

// TestOperatorKilledMidSyncResumes: an automated app of 300 ConfigMaps in
// 10 waves and a PostSync hook Job; the operator is killed once the hook's
// create is checkpointed (and the Job exists), and a new operator on the
// same state namespace resumes the sync before its first refresh: it
// completes, the hook has the first process's UID (it ran once), wave 0
// was not written again, and the status history has one entry.
func TestOperatorKilledMidSyncResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	kube, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"app/hook.yaml": `apiVersion: batch/v1
kind: Job
metadata: {name: after, annotations: {argocd.argoproj.io/hook: PostSync}}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
`}
	var b strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d, annotations: {argocd.argoproj.io/sync-wave: \"%d\"}}\n", i, i/30)
	}
	files["app/configmaps.yaml"] = b.String()
	repo := repoDir(t, files)

	var hookUID types.UID
	first := &killableStore{ConfigMapStore: state.NewConfigMapStore(kube, ns), kill: func(st state.AppState) bool {
		if st.Operation == nil || st.Operation.Checkpoint == nil {
			return false
		}
		for id, task := range st.Operation.Checkpoint.Tasks {
			if strings.HasPrefix(id, "batch/Job") && task.Name != "" && task.UID == "" {
				return true
			}
		}
		return false
	}}
	stop := runOperator(t, c, ns, func(o *gitops.Options) { o.State = first })
	o := &operator{ns: ns, c: c}
	o.create(t, newApp(ns, appSpec{name: "many", repo: repo, dest: dest, automated: true}))
	// Killed once the hook's create was checkpointed and the Job exists.
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		first.mu.Lock()
		dead := first.dead
		first.mu.Unlock()
		if !dead {
			return false, nil
		}
		j, err := kube.BatchV1().Jobs(dest).Get(ctx, "after", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		hookUID = j.UID
		return true, nil
	})
	stop()
	if err != nil {
		t.Fatalf("the first operator never created the hook: %v", err)
	}
	wave0, err := kube.CoreV1().ConfigMaps(dest).Get(ctx, "cm-000", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	stop = runOperator(t, c, ns, func(o *gitops.Options) {
		o.State = state.NewConfigMapStore(kube, ns)
	})
	t.Cleanup(stop)
	got := o.waitApp(t, "many", "the resumed sync Succeeded and the app Synced", func(ob observed) bool {
		s := ob.Status
		return s.OperationState != nil && s.OperationState.Phase == string(sync.Succeeded) && s.Sync.Status == "Synced" && len(s.History) > 0
	})
	if n := len(got.Status.History); n != 1 {
		t.Fatalf("history has %d entries, want 1:\n%s", n, got)
	}
	job, err := kube.BatchV1().Jobs(dest).Get(ctx, "after", metav1.GetOptions{})
	if err != nil || job.UID != hookUID {
		t.Fatalf("the hook ran again: uid %v, want %s (%v)", job.UID, hookUID, err)
	}
	again, err := kube.CoreV1().ConfigMaps(dest).Get(ctx, "cm-000", metav1.GetOptions{})
	if err != nil || again.ResourceVersion != wave0.ResourceVersion {
		t.Fatalf("wave 0 was written again: %v (%v)", again.ResourceVersion, err)
	}
	if _, err := kube.CoreV1().ConfigMaps(dest).Get(ctx, "cm-299", metav1.GetOptions{}); err != nil {
		t.Fatalf("the last wave is missing: %v", err)
	}
}
