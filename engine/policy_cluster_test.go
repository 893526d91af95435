package engine

import (
	"context"
	"errors"
	"net/http"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/project"
	"github.com/kubegitops/gitops/project/celpolicy"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

type writeCounter struct {
	mu   gosync.Mutex
	n    int
	next http.RoundTripper
}

func (w *writeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet && !strings.Contains(r.URL.RawQuery, "dryRun=All") {
		w.mu.Lock()
		w.n++
		w.mu.Unlock()
	}
	return w.next.RoundTrip(r)
}

func (w *writeCounter) count() int { w.mu.Lock(); defer w.mu.Unlock(); return w.n }

func newSyncer(t *testing.T, cfg *rest.Config, admit func(context.Context, *unstructured.Unstructured, bool, bool) error) (*sync.Syncer, *writeCounter) {
	t.Helper()
	checker, err := health.NewChecker(health.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	opts := sync.DefaultOptions()
	opts.WaveTimeout = time.Minute
	opts.PruneClusterScoped = true
	counter := &writeCounter{}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter })
	s, err := sync.New(cfg, opts, sync.Collaborators{Health: checker, Admit: admit})
	if err != nil {
		t.Fatal(err)
	}
	return s, counter
}

func objects(t *testing.T, ns, yaml string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := resource.Decode("t.yaml", []byte(strings.ReplaceAll(yaml, "NS", ns)), resource.DefaultDecodeOptions())
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func appFor(ns string) *Application {
	a := &Application{Spec: ApplicationSpec{Project: "team-a", Source: &ApplicationSource{RepoURL: "https://git.example.com/team-a/apps.git"},
		Destination: ApplicationDestination{Server: "https://k", Namespace: ns}}}
	a.Name = "shop"
	return a
}

// S13: a manifest naming kube-system, from a project limited to team-a-*,
// is refused at plan time and nothing is written; so is a blacklisted
// ClusterRoleBinding.
func TestProjectRefusesAtPlanTimeWithNothingWritten(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	p := teamA(t)
	p.Spec.Destinations = append(p.Spec.Destinations, ApplicationDestination{Server: "*", Namespace: ns})
	app := appFor(ns)
	s, counter := newSyncer(t, cluster.Config(), project.Admission(p, app))
	desired := objects(t, ns, `apiVersion: v1
kind: ConfigMap
metadata: {name: fine}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: sneaky, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: NS-escalate}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: default, namespace: NS}]
`)
	res, err := s.Sync(context.Background(), sync.Request{App: app.Name, Desired: desired, Namespace: ns})
	if res.Phase != sync.Failed || !errors.Is(err, ErrPolicy) {
		t.Fatalf("phase %s err %v", res.Phase, err)
	}
	// Argo CD's messages.
	for _, want := range []string{"namespace kube-system is not permitted in project 'team-a'",
		"resource rbac.authorization.k8s.io:ClusterRoleBinding is not permitted in project team-a"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	if counter.count() != 0 {
		t.Fatalf("%d writes despite refused objects", counter.count())
	}
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "fine", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatal("an allowed object was written although the sync was refused")
	}
}

// Prune obeys the project: an object of the app outside the destinations
// (left by an earlier, looser project) is never deleted.
func TestPruneNeverDeletesOutsideDestinations(t *testing.T) {
	t.Parallel()
	inside, outside := cluster.TestNamespace(t), cluster.TestNamespace(t)
	app := appFor(inside)
	loose, _ := newSyncer(t, cluster.Config(), nil)
	res, err := loose.Sync(context.Background(), sync.Request{App: app.Name, Namespace: inside,
		Desired: objects(t, inside, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: "+outside+"}\n")})
	if err != nil {
		t.Fatal(err)
	}
	p := teamA(t)
	p.Spec.Destinations = []ApplicationDestination{{Server: "*", Namespace: inside}}
	strict, _ := newSyncer(t, cluster.Config(), project.Admission(p, app))
	res, err = strict.Sync(context.Background(), sync.Request{App: app.Name, Namespace: inside, Prune: true, AllowEmpty: true})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("phase %s err %v", res.Phase, err)
	}
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	if _, err := cs.CoreV1().ConfigMaps(outside).Get(context.Background(), "b", metav1.GetOptions{}); err != nil {
		t.Fatalf("object outside the destinations was pruned: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps(inside).Get(context.Background(), "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatal("object inside the destinations was not pruned")
	}
}

// A CEL policy refuses a Deployment without limits before anything is
// written.
func TestCELPolicyRefusesDeploymentWithoutLimits(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	p := teamA(t)
	p.Spec.Destinations = []ApplicationDestination{{Server: "*", Namespace: ns}}
	pol, err := celpolicy.New("resources", celpolicy.Rule{Name: "limits", Kinds: []string{"apps/Deployment"},
		Expression: "object.spec.template.spec.containers.all(c, has(c.resources) && has(c.resources.limits))",
		Message:    "containers must set resource limits"})
	if err != nil {
		t.Fatal(err)
	}
	app := appFor(ns)
	s, counter := newSyncer(t, cluster.Config(), project.Admission(p, app, pol))
	res, err := s.Sync(context.Background(), sync.Request{App: app.Name, Namespace: ns, Desired: objects(t, ns, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`)})
	if res.Phase != sync.Failed || !strings.Contains(err.Error(), "containers must set resource limits") || counter.count() != 0 {
		t.Fatalf("phase %s err %v writes %d", res.Phase, err, counter.count())
	}
}

// S14: a sync impersonating a service account that may manage ConfigMaps
// but not Secrets fails on the Secret alone, with the API server's
// Forbidden error in its row, and writes nothing.
func TestImpersonationLimitsTheSync(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}},
	}}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "deployer"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: ns}}}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := teamA(t)
	p.Spec.DestinationServiceAccounts = []DestinationServiceAccount{{Server: "*", Namespace: ns, DefaultServiceAccount: "deployer"}}
	app := appFor(ns)
	saNS, saName, ok := project.ServiceAccountFor(p, app)
	if !ok || saNS != ns || saName != "deployer" {
		t.Fatalf("service account %s/%s %v", saNS, saName, ok)
	}
	s, counter := newSyncer(t, ImpersonatedConfig(cluster.Config(), saNS, saName), nil)
	res, err := s.Sync(ctx, sync.Request{App: app.Name, Namespace: ns, Desired: objects(t, ns,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {k: v}\n")})
	if res.Phase != sync.Failed || err == nil {
		t.Fatalf("phase %s err %v", res.Phase, err)
	}
	var failed []string
	for _, r := range res.Results {
		if strings.Contains(r.Message, "forbidden") {
			failed = append(failed, r.Key.String())
		}
	}
	if len(failed) != 1 || failed[0] != "Secret "+ns+"/s" {
		t.Fatalf("rows with Forbidden errors: %v (%s)", failed, res.Summary())
	}
	if !strings.Contains(err.Error(), `system:serviceaccount:`+ns+`:deployer" cannot`) {
		t.Fatalf("error does not carry the API server's Forbidden message: %v", err)
	}
	if counter.count() != 0 {
		t.Fatalf("%d writes", counter.count())
	}
}

// teamA is a project with source, destination and kind limits.
func teamA(t *testing.T) *Project {
	t.Helper()
	ps, err := LoadProjects(strings.NewReader(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team-a}
spec:
  sourceRepos: ['https://git.example.com/team-a/*']
  destinations:
  - {server: '*', namespace: 'team-a-*'}
  - {server: '*', namespace: '!team-a-secret'}
  clusterResourceWhitelist: [{group: '*', kind: '*'}]
  clusterResourceBlacklist: [{group: rbac.authorization.k8s.io, kind: ClusterRoleBinding}]
  namespaceResourceBlacklist: [{group: '', kind: ResourceQuota}]
`))
	if err != nil {
		t.Fatal(err)
	}
	return &ps[0]
}
