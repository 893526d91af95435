package cache

import (
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubegitops/gitops/cache/kubeconfig"
	"github.com/kubegitops/gitops/resource"
)

func cmKey(ns, name string) resource.Key {
	return resource.Key{Kind: "ConfigMap", Namespace: ns, Name: name}
}

func trackedConfigMap(t testing.TB, ns, name, app string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{
		resource.AnnotationTrackingID:  resource.TrackingID{App: app, Key: cmKey(ns, name)}.String(),
		resource.AnnotationLastApplied: `{"big":"annotation"}`,
	}}, Data: map[string]string{"k": "v"}}
	return cm
}

func TestInitialSync(t *testing.T) {
	ctx := testCtx(t)
	cs, _ := clients(t, cluster.Config())
	ns := cluster.TestNamespace(t)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, trackedConfigMap(t, ns, "tracked", "initial"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Data: map[string]string{"secret-ish": "payload"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := startCache(t, cluster.Config(), nil)

	tracked, ok := c.Get(cmKey(ns, "tracked"))
	if !ok {
		t.Fatal("tracked ConfigMap not cached")
	}
	if _, has := tracked.GetAnnotations()[resource.AnnotationLastApplied]; has {
		t.Error("last-applied annotation kept")
	}
	if len(tracked.GetManagedFields()) != 0 {
		t.Error("managedFields kept")
	}
	if v, _, _ := unstructuredString(tracked.Object, "data", "k"); v != "v" {
		t.Errorf("tracked object not kept whole: %v", tracked.Object)
	}
	plain, ok := c.Get(cmKey(ns, "plain"))
	if !ok {
		t.Fatal("untracked ConfigMap not cached")
	}
	if _, has := plain.Object["data"]; has || plain.GetUID() == "" {
		t.Errorf("untracked object not lean: %v", plain.Object)
	}
	var managed []string
	for _, o := range c.Managed("initial") {
		if o.GetNamespace() == ns { // earlier runs' namespaces linger: no namespace controller
			managed = append(managed, o.GetName())
		}
	}
	if len(managed) != 1 || managed[0] != "tracked" {
		t.Errorf("Managed(initial) in %s = %v", ns, managed)
	}
	if got := c.Namespace(ns); len(got) < 2 {
		t.Errorf("Namespace(%s) = %v", ns, got)
	}
	if v := c.ServerVersion(); !strings.HasPrefix(v, "v1.") {
		t.Errorf("ServerVersion = %q", v)
	}
	foundCM := false
	for _, l := range c.APIResources() {
		for _, r := range l.APIResources {
			if l.GroupVersion == "v1" && r.Name == "configmaps" {
				foundCM = true
			}
		}
	}
	if !foundCM {
		t.Error("APIResources lacks v1 configmaps")
	}
	// The API server renews its identity Lease: excluded by default.
	leases, err := cs.CoordinationV1().Leases("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil || len(leases.Items) == 0 {
		t.Fatalf("no lease to check exclusion against: %v", err)
	}
	if _, ok := c.Get(resource.Key{Group: "coordination.k8s.io", Kind: "Lease", Namespace: "kube-system", Name: leases.Items[0].Name}); ok {
		t.Error("Lease cached despite the default exclusion")
	}
	for gvk, err := range c.Tainted() {
		if gvk.Group == "" || gvk.Group == "apps" {
			t.Errorf("core kind tainted: %v", err)
		}
	}
	if st := c.Stats(); st.Whole == 0 || st.Whole >= st.Objects || st.Watches == 0 {
		t.Errorf("stats = %+v", st)
	}
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	cur := any(obj)
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[f]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

// recorder collects subscribed events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) add(e Event) { r.mu.Lock(); r.events = append(r.events, e); r.mu.Unlock() }

func (r *recorder) has(typ EventType, key resource.Key) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e.Type == typ && e.Key == key {
			return true
		}
	}
	return false
}

func (r *recorder) count(key resource.Key) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e.Key == key {
			n++
		}
	}
	return n
}

func TestCreateUpdateDeleteSeen(t *testing.T) {
	ctx := testCtx(t)
	cs, _ := clients(t, cluster.Config())
	ns := cluster.TestNamespace(t)
	c := startCache(t, cluster.Config(), nil)
	var rec recorder
	defer c.Subscribe(rec.add)()
	key := cmKey(ns, "live")
	cm := trackedConfigMap(t, ns, "live", "crud")
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "create seen", func() bool { _, ok := c.Get(key); return ok && rec.has(EventAdded, key) })

	cm.Data = map[string]string{"k": "changed"}
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "update seen", func() bool {
		o, ok := c.Get(key)
		v, _, _ := unstructuredString(o.Object, "data", "k")
		return ok && v == "changed" && rec.has(EventModified, key)
	})
	for _, e := range rec.events {
		if e.Key == key && e.App != "crud" {
			t.Errorf("event %v has app %q, want crud", e.Type, e.App)
		}
	}

	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "live", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "delete seen", func() bool { _, ok := c.Get(key); return !ok && rec.has(EventDeleted, key) })
	if got := c.Managed("crud"); len(got) != 0 {
		t.Errorf("Managed(crud) after delete = %v", got)
	}
}

// Updates of a tracked Deployment's status alone are not announced with
// SkipUpdate StatusOnlyUpdate; a label change is.
func TestStatusOnlyUpdatesFiltered(t *testing.T) {
	ctx := testCtx(t)
	cs, _ := clients(t, cluster.Config())
	ns := cluster.TestNamespace(t)
	c := startCache(t, cluster.Config(), func(o *cacheSetup) { o.SkipUpdate = StatusOnlyUpdate })
	var rec recorder
	defer c.Subscribe(rec.add)()
	key := resource.Key{Group: "apps", Kind: "Deployment", Namespace: ns, Name: "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{resource.AnnotationTrackingID: resource.TrackingID{App: "status", Key: key}.String()}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
	dep, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "create seen", func() bool { return rec.has(EventAdded, key) })
	before := rec.count(key)
	dep.Status.ObservedGeneration = dep.Generation
	dep.Status.Replicas = 1
	if dep, err = cs.AppsV1().Deployments(ns).UpdateStatus(ctx, dep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "status update cached", func() bool {
		o, _ := c.Get(key)
		r, _, _ := unstructuredInt(o.Object, "status", "replicas")
		return r == 1
	})
	dep.Labels = map[string]string{"tier": "front"}
	if _, err = cs.AppsV1().Deployments(ns).Update(ctx, dep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "label update announced", func() bool { return rec.count(key) > before })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := len(rec.events); got == 0 {
		t.Fatal("no events")
	}
	if n := rec.count2(key) - before; n != 1 {
		t.Errorf("%d events after the status and label updates, want 1 (the label update)", n)
	}
}

func (r *recorder) count2(key resource.Key) int {
	n := 0
	for _, e := range r.events {
		if e.Key == key {
			n++
		}
	}
	return n
}

func unstructuredInt(obj map[string]any, fields ...string) (int64, bool, error) {
	cur := any(obj)
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		cur = m[f]
	}
	i, ok := cur.(int64)
	return i, ok, nil
}

func TestLoadKubeconfig(t *testing.T) {
	named, err := kubeconfig.Load(cluster.Kubeconfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(named) == 0 || named[0].Config == nil || named[0].Config.Host != cluster.Server() {
		t.Fatalf("contexts %v, want the test cluster's", named)
	}
	c := startCache(t, named[0].Config, nil)
	if !c.Synced() || c.Len() == 0 {
		t.Error("a cache built from the kubeconfig context is not synced")
	}
	if _, err := kubeconfig.Load(cluster.Kubeconfig(), []string{"no-such-context"}); err == nil || !strings.Contains(err.Error(), "no-such-context") {
		t.Errorf("unknown context: %v", err)
	}
}

func TestMetricsOnInjectedRegisterer(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := startCache(t, cluster.Config(), func(o *cacheSetup) { o.Registerer = reg; o.Name = "local" })
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var objects float64
	for _, f := range families {
		if f.GetName() == "gitops_cluster_cache_objects" {
			objects = f.GetMetric()[0].GetGauge().GetValue()
			if f.GetMetric()[0].GetLabel()[0].GetValue() != "local" {
				t.Error("cluster label missing")
			}
		}
	}
	if objects == 0 || int(objects) > c.Len()+100 {
		t.Errorf("objects gauge = %v, cache has %d", objects, c.Len())
	}
	if _, err := New(cluster.Config(), Options{Name: "local"}, Collaborators{Registerer: reg}); err == nil {
		t.Error("second cache with the same name registered its metrics")
	}
}

// TestStoppedCacheFreesItsMetrics: a stopped cache takes its metrics off
// the Registerer, so that a new cache of the same cluster (an engine built
// again in one process, an operator restarted in-process) can register.
func TestStoppedCacheFreesItsMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	named := func(o *cacheSetup) { o.Registerer = reg; o.Name = "again" }
	c := startCache(t, cluster.Config(), named)
	c.Stop()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "gitops_cluster_cache_") {
			t.Errorf("metric %s still registered after Stop", f.GetName())
		}
	}
	next := startCache(t, cluster.Config(), named)
	if families, err = reg.Gather(); err != nil {
		t.Fatal(err)
	}
	objects := -1.0
	for _, f := range families {
		if f.GetName() == "gitops_cluster_cache_objects" {
			objects = f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	if objects <= 0 || next.Len() == 0 {
		t.Errorf("the new cache's objects gauge = %v (cache has %d)", objects, next.Len())
	}
}

// Namespaced mode: namespaced kinds only in the chosen namespaces, and only
// the chosen cluster-scoped kinds.
func TestNamespacedModeWithChosenClusterKinds(t *testing.T) {
	ctx := testCtx(t)
	cs, _ := clients(t, cluster.Config())
	mine, other := cluster.TestNamespace(t), cluster.TestNamespace(t)
	for _, ns := range []string{mine, other} {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c := startCache(t, cluster.Config(), func(o *cacheSetup) {
		o.Namespaces = []string{mine}
		o.ClusterKinds = []GroupKindMatch{{Kind: "Namespace"}}
	})
	if _, ok := c.Get(cmKey(mine, "cm")); !ok {
		t.Error("object in the chosen namespace not cached")
	}
	if _, ok := c.Get(cmKey(other, "cm")); ok {
		t.Error("object outside the chosen namespaces cached")
	}
	if _, ok := c.Get(resource.Key{Kind: "Namespace", Name: other}); !ok {
		t.Error("chosen cluster-scoped kind not cached")
	}
	if got := c.Namespace(""); len(got) == 0 {
		t.Error("no cluster-scoped objects")
	} else {
		for _, k := range got {
			if k.Kind != "Namespace" {
				t.Errorf("unchosen cluster-scoped object cached: %v", k)
			}
		}
	}
}
