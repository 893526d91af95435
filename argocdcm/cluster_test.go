package argocdcm

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// requestLog records the paths of every request a client sends.
type requestLog struct {
	mu    gosync.Mutex
	paths []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.paths = append(l.paths, r.URL.Path)
		l.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

func (l *requestLog) count(suffix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, p := range l.paths {
		if strings.HasSuffix(p, suffix) {
			n++
		}
	}
	return n
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestArgoCDSettingsEndToEnd runs an engine configured by a realistic
// argocd-cm (testdata/argocd-cm.yaml) against the local cluster: the
// excluded kinds are never listed or watched, an excluded desired object
// is reported and never created, the caBundle and replicas ignore rules
// keep the app Synced through changes made by hand, and the argocd-cm
// health script judges the ConfigMap.
func TestArgoCDSettingsEndToEnd(t *testing.T) {
	t.Parallel()
	settings, err := LoadFile("testdata/argocd-cm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	log := &requestLog{}
	e := newEngine(t, func(o *gitops.Options) {
		if err := settings.Apply(o); err != nil {
			t.Fatal(err)
		}
		cfg := rest.CopyConfig(cluster.Config())
		cfg.Wrap(log.wrap)
		o.Clusters[0].Config = cfg
	})
	ns := cluster.TestNamespace(t)
	webhook := "gitops-test-" + ns
	files := map[string]string{
		"app/web.yaml": webApp,
		"app/legacy-endpoints.yaml": `apiVersion: v1
kind: Endpoints
metadata: {name: legacy}
subsets: [{addresses: [{ip: 10.0.0.1}], ports: [{port: 80}]}]
`,
		"app/webhook.yaml": fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: %s}
webhooks:
- name: widgets.example.invalid
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  clientConfig:
    url: https://webhook.example.invalid/mutate
    caBundle: Zmlyc3Q=
  rules:
  - apiGroups: [example.invalid]
    apiVersions: [v1]
    operations: [CREATE]
    resources: [widgets]
    scope: "*"
`, webhook),
	}
	app := dirApp(ns, repoDir(t, files), ns)
	ctx := context.Background()
	t.Cleanup(func() {
		cs, _ := kubernetes.NewForConfig(cluster.Config())
		_ = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), webhook, metav1.DeleteOptions{})
	})
	res, err := e.Sync(ctx, app, gitops.SyncRequest{})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	st := refreshUntil(t, e, app, "Synced and Healthy", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced && s.Health.Code == health.Healthy })
	excluded := slices.ContainsFunc(st.Conditions, func(c appstatus.Condition) bool {
		return c.Type == appstatus.ConditionExcludedResource && strings.Contains(c.Message, "Endpoints "+ns+"/legacy")
	})
	if !excluded || len(st.Resources) != 3 {
		t.Fatalf("excluded object not reported, or compared: conditions %+v, %d resources", st.Conditions, len(st.Resources))
	}
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	if _, err := cs.CoreV1().Endpoints(ns).Get(ctx, "legacy", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the excluded Endpoints was applied (get: %v)", err)
	}
	// Objects are tracked with Argo CD's annotation, as argocd-cm asked.
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil || cm.Annotations[resource.AnnotationArgoTrackingID] == "" {
		t.Fatalf("tracking annotation: %v %v", cm.Annotations, err)
	}

	// Changes by hand to ignored fields: the caBundle (the docs' rule) and
	// the Deployment's replicas (a per-kind rule). Wait until the cache
	// has seen both, then the app must still be Synced.
	if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Patch(ctx, webhook, types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/webhooks/0/clientConfig/caBundle","value":"c2Vjb25k"}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{FieldManager: "kubectl-scale"}); err != nil {
		t.Fatal(err)
	}
	// Tracked objects are read from the engine's cluster cache.
	seen := func(ctx context.Context) (bool, error) {
		w, err1 := e.LiveObject(ctx, app, resource.Key{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration", Name: webhook})
		d, err2 := e.LiveObject(ctx, app, resource.Key{Group: "apps", Kind: "Deployment", Namespace: ns, Name: "web"})
		if err1 != nil || err2 != nil {
			return false, nil
		}
		return strings.Contains(fmt.Sprint(w.Object["webhooks"]), "c2Vjb25k") && fmt.Sprint(d.Object["spec"].(map[string]any)["replicas"]) == "2", nil
	}
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := wait.PollUntilContextCancel(pctx, 100*time.Millisecond, true, seen); err != nil {
		t.Fatalf("waiting for the cache to see both changes: %v", err)
	}
	if st, err := e.Refresh(ctx, app); err != nil || st.Sync != appstatus.Synced {
		t.Fatalf("ignored changes made the app %s (%v): %+v", st.Sync, err, st.Resources)
	}

	// The argocd-cm health script judges the ConfigMap.
	if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, "settings", types.MergePatchType, []byte(`{"data":{"state":"broken"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	refreshUntil(t, e, app, "the ConfigMap judged Degraded by argocd-cm's script", func(s appstatus.Status) bool {
		for _, r := range s.Resources {
			if r.Key.Kind == "ConfigMap" && r.Health != nil && r.Health.Code == health.Degraded && r.Health.Message == "the config says it is broken" {
				return true
			}
		}
		return false
	})

	// The excluded kinds were never listed nor watched; others were.
	for _, p := range []string{"/endpoints", "/endpointslices", "/leases", "/events"} {
		if n := log.count(p); n != 0 {
			t.Errorf("%d requests for %s", n, p)
		}
	}
	if log.count("/configmaps") == 0 {
		t.Error("no request for configmaps: the counter counts nothing")
	}
}

// TestReadArgoCDSettingsFromTheCluster reads argocd-cm from a namespace of
// the local cluster; a missing ConfigMap is an error naming it.
func TestReadArgoCDSettingsFromTheCluster(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	ctx := context.Background()
	if _, err := Read(ctx, cluster.Config(), ns); !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), ns+"/argocd-cm") {
		t.Fatalf("missing ConfigMap: %v", err)
	}
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: ns}, Data: map[string]string{
		"timeout.reconciliation":                         "5m",
		"resource.customizations.health.apps_Deployment": "return {status = \"Healthy\"}",
		"ui.bannercontent":                               "hello",
	}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := Read(ctx, cluster.Config(), ns)
	if err != nil {
		t.Fatal(err)
	}
	if s.Reconciliation != 5*time.Minute || s.HealthOverrides["apps/Deployment"] == "" || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "ui.bannercontent") {
		t.Fatalf("%+v", s)
	}
}

// An aggregated ClusterRole's rules are written by kube-controller-manager's
// aggregation controller. With argocd-cm's resource.compareoptions
// ignoreAggregatedRoles: true the app is Synced; without it, OutOfSync.
func TestAggregatedClusterRoleWithIgnoreAggregatedRoles(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	label := "gitops.test/aggregate-to-" + ns
	manifests := fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[1]s-aggregate}
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {%[2]s: "true"}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %[1]s-part
  labels: {%[2]s: "true"}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [list]}
`, ns, label)
	dir := repoDir(t, map[string]string{"app/roles.yaml": manifests})
	t.Cleanup(func() {
		dyn := dynamic.NewForConfigOrDie(cluster.Config())
		roles := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
		for _, n := range []string{ns + "-aggregate", ns + "-part"} {
			_ = dyn.Resource(roles).Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	plain := newEngine(t, nil)
	app := dirApp(ns, dir, ns)
	res, err := plain.Sync(context.Background(), app, gitops.SyncRequest{})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	// The controller replaces the rules with the aggregated part's.
	refreshUntil(t, plain, app, "the aggregated role to drift", func(s appstatus.Status) bool {
		for _, r := range s.Resources {
			if r.Key.Name == ns+"-aggregate" {
				return r.Status == appstatus.OutOfSync && strings.Contains(r.Diff, "configmaps")
			}
		}
		return false
	})
	settings, err := Parse(map[string]string{"resource.compareoptions": "ignoreAggregatedRoles: true\n"})
	if err != nil {
		t.Fatal(err)
	}
	ignoring := newEngine(t, func(o *gitops.Options) {
		if err := settings.Apply(o); err != nil {
			t.Fatal(err)
		}
	})
	if !settings.IgnoreAggregatedRoles {
		t.Fatal("ignoreAggregatedRoles not parsed")
	}
	st := refreshUntil(t, ignoring, app, "Synced with ignoreAggregatedRoles", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
	if len(st.Conditions) != 0 {
		t.Fatalf("conditions %+v", st.Conditions)
	}
}
