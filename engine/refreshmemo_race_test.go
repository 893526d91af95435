package engine

import (
	"context"
	gosync "sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// editDuringDiff is a Differ that, once armed, edits the live object of
// the first key it compares in the real cluster and waits for the
// engine's cache to hold the edit before it answers on the version it was
// given: the watch event lands between the comparison's read and the
// memo's, on demand (under load it does so by chance).
type editDuringDiff struct {
	Differ
	mu    gosync.Mutex
	armed func(ctx context.Context, live *unstructured.Unstructured)
}

func (d *editDuringDiff) arm(f func(ctx context.Context, live *unstructured.Unstructured)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.armed = f
}

func (d *editDuringDiff) Diff(ctx context.Context, desired, live *unstructured.Unstructured) (diff.Result, error) {
	d.mu.Lock()
	f := d.armed
	d.armed = nil
	d.mu.Unlock()
	if f != nil && live != nil {
		f(ctx, live)
	}
	return d.Differ.Diff(ctx, desired, live)
}

// A refresh memo is kept under the live versions its comparison read: a
// watch event that lands while the comparison runs must not give the old
// verdict the new version's fingerprint, or every later refresh reuses a
// verdict the cluster has long left (an edit by hand stayed Synced).
func TestRefreshMemoKeepsTheVersionsItCompared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	var cc ClusterCache
	var differ *editDuringDiff
	e := newEngine(t, func(o *Options) {
		o.NewClusterCache = func(cfg *rest.Config, opts cache.Options, with cache.Collaborators) (ClusterCache, error) {
			c, err := defaultNewClusterCache(cfg, opts, with)
			cc = c
			return c, err
		}
		o.NewDiffer = func(opts diff.Options) (Differ, error) {
			d, err := defaultNewDiffer(opts)
			differ = &editDuringDiff{Differ: d}
			return differ, err
		}
	})
	dir := repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n"})
	app := dirApp(ns, dir, ns)
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	refreshUntil(t, e, app, "Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })

	// Git moves to k: w; while the refresh compares it with the live k: v,
	// someone sets k: w by hand, and the cache learns of it before the
	// comparison ends.
	cs := kubernetes.NewForConfigOrDie(cluster.Config())
	key := resource.Key{Kind: "ConfigMap", Namespace: ns, Name: "c"}
	fired := false
	differ.arm(func(ctx context.Context, live *unstructured.Unstructured) {
		fired = true
		if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, "c", types.MergePatchType, []byte(`{"data":{"k":"w"}}`), metav1.PatchOptions{}); err != nil {
			t.Errorf("edit: %v", err)
			return
		}
		eventually(t, 30*time.Second, "the cache to hold the edit", func() bool {
			obj, ok := cc.Get(key)
			return ok && obj.GetResourceVersion() != live.GetResourceVersion()
		})
	})
	testfiles.Write(t, dir, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: w}\n"})
	if st, err := e.Refresh(ctx, app); err != nil || st.Sync != appstatus.OutOfSync || !fired {
		t.Fatalf("the refresh during the edit: %v, %s, edited %v; want OutOfSync (it compared the version before the edit)", err, st.Sync, fired)
	}
	// The live object now matches Git: the next refresh must see it.
	st, err := e.Refresh(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sync != appstatus.Synced {
		t.Fatalf("the refresh after the edit says %s: it reused the verdict on the version before the edit", st.Sync)
	}
}
