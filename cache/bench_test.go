package cache

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubegitops/gitops/resource"
)

// The benchmarks share one data set, created once per test binary run:
// benchConfigMaps ConfigMaps (about 250 bytes of data each, like the
// baselines) and benchPods Pods in one namespace, plus an application of
// benchAppObjects tracked ConfigMaps in a namespace of its own.
const (
	benchConfigMaps = 10000
	benchPods       = 5000
	benchAppObjects = 20
	benchApp        = "bench-app"
	benchNS         = "cache-bench"
	benchAppNS      = "cache-bench-app"
	benchWriters    = 16
)

var (
	benchOnce sync.Once
	benchErr  error
)

func benchData(b *testing.B) {
	b.Helper()
	benchOnce.Do(func() { benchErr = createBenchData() })
	if benchErr != nil {
		b.Fatal(benchErr)
	}
}

func createBenchData() error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cfg := cluster.Config()
	cfg.QPS, cfg.Burst = 1000, 2000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, ns := range []string{benchNS, benchAppNS} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		// No controller-manager: the ServiceAccount Pods need is ours to make.
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	payload := strings.Repeat("x", 250)
	jobs := make(chan func() error)
	errs := make(chan error, benchWriters)
	var wg sync.WaitGroup
	for range benchWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range jobs {
				if err := job(); err != nil && !apierrors.IsAlreadyExists(err) {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := range benchConfigMaps {
		jobs <- func() error {
			_, err := cs.CoreV1().ConfigMaps(benchNS).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Labels: map[string]string{"bench": "yes"}},
				Data:       map[string]string{"payload": payload},
			}, metav1.CreateOptions{})
			return err
		}
	}
	for i := range benchPods {
		jobs <- func() error {
			_, err := cs.CoreV1().Pods(benchNS).Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%05d", i), Labels: map[string]string{"app": "bench"}},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: ptr.To(false),
					Containers:                   []corev1.Container{{Name: "app", Image: "registry.example/app:1.0", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}},
				},
			}, metav1.CreateOptions{})
			return err
		}
	}
	for i := range benchAppObjects {
		jobs <- func() error {
			name := fmt.Sprintf("app-%02d", i)
			_, err := cs.CoreV1().ConfigMaps(benchAppNS).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
					resource.AnnotationTrackingID: resource.TrackingID{App: benchApp, Key: cmKey(benchAppNS, name)}.String(),
				}},
				Data: map[string]string{"payload": payload},
			}, metav1.CreateOptions{})
			return err
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return fmt.Errorf("creating benchmark objects: %w", err)
	default:
		return nil
	}
}

var benchKinds = []GroupKindMatch{{Kind: "ConfigMap"}, {Kind: "Pod"}}

// bareList lists ConfigMaps and then Pods across the cluster in pages of
// 500, keeping nothing: the floor a cache's initial sync is compared to.
func bareList(b *testing.B, dyn dynamic.Interface) int {
	b.Helper()
	n := 0
	for _, gvr := range []schema.GroupVersionResource{{Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "pods"}} {
		opts := metav1.ListOptions{Limit: 500}
		for {
			l, err := dyn.Resource(gvr).List(context.Background(), opts)
			if err != nil {
				b.Fatal(err)
			}
			n += len(l.Items)
			if l.GetContinue() == "" {
				break
			}
			opts.Continue = l.GetContinue()
		}
	}
	return n
}

// syncOnce starts a cache, waits for its sync and returns the time taken.
func syncOnce(b *testing.B, mutate func(*cacheSetup)) (time.Duration, *ClusterCache, func()) {
	b.Helper()
	opts := cacheSetup{Options: DefaultOptions()}
	if mutate != nil {
		mutate(&opts)
	}
	c, err := New(cluster.Config(), opts.Options, opts.Collaborators)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	return time.Since(start), c, func() { cancel(); c.Stop() }
}

// BenchmarkInitialSync compares a cache's initial sync with a bare
// paginated list of the same objects, measured in pairs in one run. The
// "median-ratio" metric is the target (1.2 or less).
func BenchmarkInitialSync(b *testing.B) {
	benchData(b)
	cfg := cluster.Config()
	cfg.QPS, cfg.Burst = 50, 100
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	bareList(b, dyn) // warm the API server's watch cache
	for _, bc := range []struct {
		name   string
		mutate func(*cacheSetup)
	}{
		{"configmaps+pods", func(o *cacheSetup) { o.Filter.Include = benchKinds }},
		{"all-kinds", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var bare, synced time.Duration
			var ratios []float64
			objects := 0
			for b.Loop() {
				// Alternate which goes first, so that a warm or cold API
				// server favours neither; the median of the paired ratios
				// resists the noise of a shared machine.
				var db, ds time.Duration
				measureBare := func() { start := time.Now(); bareList(b, dyn); db = time.Since(start) }
				measureSync := func() {
					d, c, stop := syncOnce(b, bc.mutate)
					ds, objects = d, c.Len()
					stop()
				}
				if len(ratios)%2 == 0 {
					measureBare()
					measureSync()
				} else {
					measureSync()
					measureBare()
				}
				bare += db
				synced += ds
				ratios = append(ratios, ds.Seconds()/db.Seconds())
			}
			sort.Float64s(ratios)
			b.ReportMetric(bare.Seconds()/float64(len(ratios)), "bare-s")
			b.ReportMetric(synced.Seconds()/float64(len(ratios)), "sync-s")
			b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
			b.ReportMetric(float64(objects), "objects")
		})
	}
}

// BenchmarkHeapPerObject reports the live heap a synced cache of the
// benchmark's ConfigMaps and Pods holds per object: lean (the default:
// trimmed, metadata only for untracked objects), whole objects trimmed of
// managedFields and last-applied, and whole objects untrimmed.
//
// The lean and whole-trimmed caches are held to heapBudgetPerObject.
func BenchmarkHeapPerObject(b *testing.B) {
	benchData(b)
	keepAll := func(*unstructured.Unstructured, string) (any, bool) { return nil, true }
	for _, bc := range []struct {
		name   string
		mutate func(*cacheSetup)
	}{
		{"lean", func(o *cacheSetup) { o.Filter.Include = benchKinds }},
		{"whole-trimmed", func(o *cacheSetup) { o.Filter.Include = benchKinds; o.Populate = keepAll }},
		{"whole-untrimmed", func(o *cacheSetup) {
			o.Filter.Include = benchKinds
			o.Populate = keepAll
			o.KeepManagedFields, o.KeepLastApplied = true, true
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var perObject float64
			for b.Loop() {
				before := liveHeap()
				_, c, stop := syncOnce(b, bc.mutate)
				after := liveHeap()
				perObject = float64(after-before) / float64(c.Len())
				runtime.KeepAlive(c)
				stop()
			}
			b.ReportMetric(perObject, "heap-B/object")
			if budget, ok := heapBudgetPerObject[bc.name]; ok && perObject > budget {
				b.Fatalf("a %s cached object costs %.0f B of heap, over the budget of %.0f B", bc.name, perObject, budget)
			}
		})
	}
}

// heapBudgetPerObject is the memory budget of one cached object: lean (an
// object no app manages, kept as metadata) and whole-trimmed (a managed
// object, kept whole for the diff, without managedFields and last-applied).
// The fleet target of issue 46 gives 500 MB to 10,000 apps and their 50,000
// managed objects: 2 KiB each is 100 MB of it (a whole object is kept as
// its JSON; decoded it cost 3.5 KB).
var heapBudgetPerObject = map[string]float64{"lean": 1024, "whole-trimmed": 2048}

func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkManagedLookup looks up one application's objects in a cache
// holding only them, and in one holding the benchmark's 15,000 unrelated
// objects as well: the cost must not depend on the unrelated ones.
func BenchmarkManagedLookup(b *testing.B) {
	benchData(b)
	for _, bc := range []struct {
		name   string
		mutate func(*cacheSetup)
	}{
		{"app-only", func(o *cacheSetup) { o.Namespaces = []string{benchAppNS}; o.Filter.Include = benchKinds }},
		{"with-15000-unrelated", func(o *cacheSetup) { o.Filter.Include = benchKinds }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			_, c, stop := syncOnce(b, bc.mutate)
			defer stop()
			if n := len(c.Managed(benchApp)); n != benchAppObjects {
				b.Fatalf("Managed found %d objects, want %d", n, benchAppObjects)
			}
			for b.Loop() {
				if len(c.Managed(benchApp)) != benchAppObjects {
					b.Fatal("lookup lost objects")
				}
			}
			b.ReportMetric(float64(c.Len()), "cached")
		})
	}
}
