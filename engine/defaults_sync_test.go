package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/sync"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

const untaggedWeb = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`

const rollingDB = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 0
  updateStrategy: {type: RollingUpdate}
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: "postgres:17"}]}
`

const reportJob = `apiVersion: batch/v1
kind: CronJob
metadata: {name: report}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec: {restartPolicy: Never, containers: [{name: report, image: "busybox:1.37"}]}
`

// TestServerDefaultsConvergeAfterSync: the server's defaults are predicted
// as the server applies them, on what a sync leaves, in both apply modes.
// After each sync the next refresh is Synced and a second sync writes
// nothing:
//
//   - image nginx (pull policy defaulted Always) changed in Git to
//     nginx:1.27: the server keeps Always; a prediction that defaulted the
//     desired image first said IfNotPresent, OutOfSync forever;
//   - a StatefulSet with updateStrategy type RollingUpdate: the server adds
//     no rollingUpdate to an explicit type (the prediction used to add
//     partition 0, hidden only because live got the same wrong default);
//   - a CronJob whose history limit another manager raised: Git does not
//     set it, so no sync changes it; the default 3 applied to desired
//     before the merge made it drift no sync could heal.
func TestServerDefaultsConvergeAfterSync(t *testing.T) {
	t.Parallel()
	type step struct {
		// change edits the cluster (as another manager) before Git changes.
		change func(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string)
		// check runs on the cluster after the sync of Git's change.
		check func(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string)
	}
	scenarios := []struct {
		name       string
		file, next string
		step
	}{{
		name: "pull policy of an image given a tag",
		file: untaggedWeb,
		next: strings.Replace(untaggedWeb, "image: nginx", `image: "nginx:1.27"`, 1),
		step: step{check: func(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string) {
			d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if c := d.Spec.Template.Spec.Containers[0]; c.Image != "nginx:1.27" || c.ImagePullPolicy != "Always" {
				t.Fatalf("after the sync: image %s pull policy %s, want nginx:1.27 and the server's kept Always", c.Image, c.ImagePullPolicy)
			}
		}},
	}, {
		name: "StatefulSet with an explicit RollingUpdate type",
		file: rollingDB,
		next: strings.Replace(rollingDB, "metadata: {name: db}", "metadata: {name: db, labels: {tier: data}}", 1),
		step: step{check: func(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string) {
			s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Labels["tier"] != "data" || s.Spec.UpdateStrategy.RollingUpdate != nil {
				t.Fatalf("after the sync: labels %v, rollingUpdate %+v (want none: the server adds none to an explicit type)", s.Labels, s.Spec.UpdateStrategy.RollingUpdate)
			}
		}},
	}, {
		name: "CronJob history limit another manager set",
		file: reportJob,
		next: strings.Replace(reportJob, `"0 3 * * *"`, `"0 4 * * *"`, 1),
		step: step{
			change: func(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string) {
				patch := []byte(`{"spec":{"successfulJobsHistoryLimit":10}}`)
				if _, err := cs.BatchV1().CronJobs(ns).Patch(ctx, "report", types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "operator"}); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string) {
				c, err := cs.BatchV1().CronJobs(ns).Get(ctx, "report", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if c.Spec.Schedule != "0 4 * * *" || c.Spec.SuccessfulJobsHistoryLimit == nil || *c.Spec.SuccessfulJobsHistoryLimit != 10 {
					t.Fatalf("after the sync: schedule %q history limit %v, want Git's schedule and the operator's limit", c.Spec.Schedule, c.Spec.SuccessfulJobsHistoryLimit)
				}
			},
		},
	}}
	modes := []struct {
		name    string
		options []string
	}{{"ssa", nil}, {"csa", []string{"ServerSideApply=false"}}}
	for _, sc := range scenarios {
		for _, m := range modes {
			t.Run(sc.name+"/"+m.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				ns := cluster.TestNamespace(t)
				cs := kubernetes.NewForConfigOrDie(cluster.Config())
				e := newEngine(t, nil)
				dir := repoDir(t, map[string]string{"app/obj.yaml": sc.file})
				app := dirApp(ns, dir, ns)
				app.Spec.SyncPolicy = &SyncPolicy{SyncOptions: m.options}
				if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
					t.Fatalf("first sync: %v %s", err, res.Summary())
				}
				refreshUntil(t, e, app, "Synced after the first sync", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
				if sc.change != nil {
					sc.change(t, ctx, cs, ns)
				}

				testfiles.Write(t, dir, map[string]string{"app/obj.yaml": sc.next})
				st := refreshUntil(t, e, app, "Git's change seen", func(s appstatus.Status) bool { return s.Sync == appstatus.OutOfSync })
				if n := len(st.Resources); n != 1 {
					t.Fatalf("%d resources, want 1", n)
				}
				if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
					t.Fatalf("sync of Git's change: %v %s", err, res.Summary())
				}
				sc.check(t, ctx, cs, ns)
				refreshUntil(t, e, app, "Synced after the sync of Git's change", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })

				// The step after: a second sync writes nothing.
				res, err := e.Sync(ctx, app, SyncRequest{})
				if err != nil || res.Phase != sync.Succeeded {
					t.Fatalf("second sync: %v %s", err, res.Summary())
				}
				for _, r := range res.Results {
					if r.Action != sync.Unchanged {
						t.Fatalf("second sync wrote %s: %s", r.Key, res.Summary())
					}
				}
			})
		}
	}
}
