package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubegitops/gitops/cache"
)

// cacheSection creates cfg.CacheObjects ConfigMaps and compares the
// cluster cache's initial sync (New, Start, WaitForSync) of the
// ConfigMaps with a bare paginated list of them (pages of 500, keeping
// nothing), in pairs whose order alternates; it also measures the heap the
// synced cache keeps per object, lean (the default) and whole.
func (h *harness) cacheSection(ctx context.Context) ([]Row, error) {
	dyn, err := h.dynamic(nil)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(h.restConfig(nil))
	if err != nil {
		return nil, err
	}
	ns, err := h.createNamespace(ctx, dyn, "bench-cache")
	if err != nil {
		return nil, err
	}
	defer deleteNamespaces(dyn, []string{ns})
	n := h.cfg.CacheObjects
	h.logf("creating %d ConfigMaps", n)
	payload := strings.Repeat("x", 250)
	if err := parallel(n, 16, func(i int) error {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Labels: map[string]string{"bench": "yes"}},
			Data:       map[string]string{"payload": payload},
		}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return nil, err
	}

	include := func(o *cache.Options) { o.Filter.Include = []cache.GroupKindMatch{{Kind: "ConfigMap"}} }
	syncOnce := func(mutate func(*cache.Options)) (time.Duration, int, error) {
		opts := cache.DefaultOptions()
		opts.QPS, opts.Burst = -1, 0
		include(&opts)
		if mutate != nil {
			mutate(&opts)
		}
		c, err := cache.New(h.restConfig(nil), opts, cache.Collaborators{})
		if err != nil {
			return 0, 0, err
		}
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		start := time.Now()
		if err := c.Start(cctx); err != nil {
			return 0, 0, err
		}
		if err := c.WaitForSync(cctx); err != nil {
			return 0, 0, err
		}
		d := time.Since(start)
		objects := c.Len()
		c.Stop()
		return d, objects, nil
	}
	bare := func() (time.Duration, int, error) {
		start := time.Now()
		objects, err := bareList(ctx, dyn)
		return time.Since(start), objects, err
	}
	if _, _, err := bare(); err != nil { // warm the API server's watch cache
		return nil, err
	}
	var ratios []float64
	var syncs, lists []time.Duration
	for i := range max(h.cfg.Repeat, 2) {
		var ds, db time.Duration
		var objs, listed int
		var err1, err2 error
		if i%2 == 0 {
			db, listed, err1 = bare()
			ds, objs, err2 = syncOnce(nil)
		} else {
			ds, objs, err2 = syncOnce(nil)
			db, listed, err1 = bare()
		}
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("list: %v; cache: %v", err1, err2)
		}
		if objs < n || listed < n {
			return nil, fmt.Errorf("the cache holds %d objects and the list returned %d; want at least %d", objs, listed, n)
		}
		syncs, lists = append(syncs, ds), append(lists, db)
		ratios = append(ratios, ds.Seconds()/db.Seconds())
	}
	h.logf("cache: sync %.3f s, bare list %.3f s, median ratio %.2f", medianDuration(syncs), medianDuration(lists), median(ratios))

	keepAll := func(*unstructured.Unstructured, string) (any, bool) { return nil, true }
	heap := func(mutate func(*cache.Options, *cache.Collaborators)) (float64, error) {
		var per []float64
		for range h.cfg.Repeat {
			opts := cache.DefaultOptions()
			opts.QPS, opts.Burst = -1, 0
			include(&opts)
			var with cache.Collaborators
			if mutate != nil {
				mutate(&opts, &with)
			}
			before := liveHeap()
			c, err := cache.New(h.restConfig(nil), opts, with)
			if err != nil {
				return 0, err
			}
			cctx, cancel := context.WithCancel(ctx)
			if err := c.Start(cctx); err != nil {
				cancel()
				return 0, err
			}
			c.Stop()
			cancel()
			after := liveHeap()
			per = append(per, float64(after-before)/float64(c.Len()))
			runtime.KeepAlive(c)
		}
		return median(per), nil
	}
	lean, err := heap(nil)
	if err != nil {
		return nil, err
	}
	whole, err := heap(func(o *cache.Options, w *cache.Collaborators) {
		w.Populate = keepAll
		o.KeepManagedFields, o.KeepLastApplied = true, true
	})
	if err != nil {
		return nil, err
	}
	h.logf("cache heap: lean %.0f B, whole untrimmed %.0f B per object", lean, whole)
	ge := "gitops-engine"
	ref := "baselines.md, not this run"
	measure := fmt.Sprintf("initial sync, %d ConfigMaps", n)
	return []Row{
		{Section: "cache", Measure: measure, PairedRatio: median(ratios), Ours: medianDuration(syncs), Theirs: medianDuration(lists), TheirName: "bare paginated list", Unit: Seconds, Target: "1.2 or less (issue 5)"},
		{Section: "cache", Measure: "heap per object, lean (default)", Ours: lean, Theirs: 1240, TheirName: ge + " references only", Ref: ref, Unit: BytesPerObj},
		{Section: "cache", Measure: "heap per object, whole objects, untrimmed", Ours: whole, Theirs: 8520, TheirName: ge + " full objects", Ref: ref, Unit: BytesPerObj},
		{Section: "cache", Measure: "heap per object, lean against whole", Ours: lean, Theirs: whole, TheirName: "our whole, untrimmed", Unit: BytesPerObj, Target: "0.5 or less (issue 5)"},
	}, nil
}

// bareList lists every ConfigMap of the cluster in pages of 500, keeping
// nothing: the floor a cache's initial sync is compared to.
func bareList(ctx context.Context, dyn dynamic.Interface) (int, error) {
	n := 0
	opts := metav1.ListOptions{Limit: 500}
	for {
		l, err := dyn.Resource(gvrConfigMaps).List(ctx, opts)
		if err != nil {
			return n, err
		}
		n += len(l.Items)
		if l.GetContinue() == "" {
			return n, nil
		}
		opts.Continue = l.GetContinue()
	}
}

// liveHeap returns the live heap after two collections.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
