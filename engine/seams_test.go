package engine

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

type countingDiffer struct {
	Differ
	n *atomic.Int32
}

func (c countingDiffer) Diff(ctx context.Context, desired, live *unstructured.Unstructured) (diff.Result, error) {
	c.n.Add(1)
	return c.Differ.Diff(ctx, desired, live)
}

type countingSyncer struct {
	Syncer
	n *atomic.Int32
}

func (c countingSyncer) Sync(ctx context.Context, req sync.Request) (sync.Result, error) {
	c.n.Add(1)
	return c.Syncer.Sync(ctx, req)
}

type countingCache struct {
	ClusterCache
	n *atomic.Int32
}

func (c countingCache) Get(key resource.Key) (*unstructured.Unstructured, bool) {
	c.n.Add(1)
	return c.ClusterCache.Get(key)
}

// The engine is built from its seams: a host's cache, differ and syncer
// (here the defaults wrapped in counters) are the ones it uses.
func TestEngineUsesInjectedSeams(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	var caches, diffs, syncs atomic.Int32
	e := newEngine(t, func(o *Options) {
		o.NewClusterCache = func(cfg *rest.Config, opts cache.Options, with cache.Collaborators) (ClusterCache, error) {
			c, err := defaultNewClusterCache(cfg, opts, with)
			return countingCache{c, &caches}, err
		}
		o.NewDiffer = func(opts diff.Options) (Differ, error) {
			d, err := defaultNewDiffer(opts)
			return countingDiffer{d, &diffs}, err
		}
		o.NewSyncer = func(cfg *rest.Config, opts sync.Options, with sync.Collaborators) (Syncer, error) {
			s, err := defaultNewSyncer(cfg, opts, with)
			return countingSyncer{s, &syncs}, err
		}
	})
	app := dirApp(ns, repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"}), ns)
	if _, err := e.Refresh(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	if res, err := e.Sync(context.Background(), app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v", err)
	}
	if caches.Load() == 0 || diffs.Load() == 0 || syncs.Load() != 1 {
		t.Fatalf("cache gets %d, diffs %d, syncs %d", caches.Load(), diffs.Load(), syncs.Load())
	}
}
