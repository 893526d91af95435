package engine

import (
	"context"
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/sync"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestRetryRefreshSyncsTheLatestCommit is Argo CD's syncPolicy.retry.
// refresh on a real Git server: the first attempt syncs a commit whose
// ConfigMap is judged Degraded, so it fails; the fix is pushed before the
// retry. With refresh the retry resolves the branch again and syncs the
// fix (Succeeded, at the new commit); without it the retry syncs the
// commit the operation started with, and fails again.
func TestRetryRefreshSyncsTheLatestCommit(t *testing.T) {
	t.Parallel()
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: state}\ndata: {state: %s}\n"
	ho := health.DefaultOptions()
	ho.Overrides = map[string]string{"ConfigMap": `
if obj.data ~= nil and obj.data.state == "broken" then
  return {status = "Degraded", message = "broken on purpose"}
end
return {status = "Healthy"}`}
	checker, err := health.NewChecker(ho)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	for _, refresh := range []bool{true, false} {
		t.Run(map[bool]string{true: "refresh", false: "no refresh"}[refresh], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			gs, broken := testfiles.GitRepo(t, gitserver.DefaultOptions(), "retry", fstest.MapFS{
				"app/cm.yaml": {Data: []byte(fmt.Sprintf(cm, "broken"))},
			})
			var fixed string
			var pushErr error
			attempts := 0
			e := newEngine(t, func(o *Options) {
				o.Health = checker
				o.Sync.OnProgress = func(p sync.Progress) {
					if !p.Final {
						return
					}
					// Called before Sync returns the attempt's result, so
					// the fix is on the server before the retry starts.
					if attempts++; attempts == 1 {
						fixed, pushErr = gs.Commit(ctx, "retry", "fix the state", map[string][]byte{"app/cm.yaml": []byte(fmt.Sprintf(cm, "fixed"))})
					}
				}
			})
			ns := cluster.TestNamespace(t)
			app := gitApp(ns, gs.RepoURL("retry"), gs.Branch(), ns)
			app.Spec.SyncPolicy = &SyncPolicy{Retry: &RetryStrategy{Limit: 1, Backoff: &Backoff{Duration: "1s", Factor: &one}, Refresh: refresh}}
			res, err := e.Sync(ctx, app, SyncRequest{})
			if pushErr != nil {
				t.Fatal(pushErr)
			}
			if attempts != 2 || fixed == "" {
				t.Fatalf("%d attempts (fix pushed: %v), want 2", attempts, fixed != "")
			}
			live, gerr := cs.CoreV1().ConfigMaps(ns).Get(ctx, "state", metav1.GetOptions{})
			if gerr != nil {
				t.Fatal(gerr)
			}
			last, lerr := e.LastOperation(ctx, v1alpha1.KeyOf(app))
			ok := lerr == nil && last != nil
			if !ok {
				t.Fatalf("no last operation: %v", lerr)
			}
			if refresh {
				if res.Phase != sync.Succeeded || err != nil || live.Data["state"] != "fixed" || !ok || last.Revision != fixed {
					t.Fatalf("with refresh: %s (%v), live state %q, last operation at %s; want Succeeded at the fix %s", res.Phase, err, live.Data["state"], last.Revision, fixed)
				}
				return
			}
			if res.Phase != sync.Failed || live.Data["state"] != "broken" || !ok || last.Revision != broken {
				t.Fatalf("without refresh: %s (%v), live state %q, last operation at %s; want Failed at the first commit %s", res.Phase, err, live.Data["state"], last.Revision, broken)
			}
		})
	}
}
