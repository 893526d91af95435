package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/internal/reftools"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/helm"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/helmrepo"
	"github.com/kubegitops/gitops/source/repocreds"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
)

const (
	chartUser     = "charts"
	chartPassword = "chart-pass-9f2c"
)

// chartRepo serves web 1.0.0 and 1.0.1 over HTTPS with basic auth.
func chartRepo(t *testing.T) *chartserver.Repo {
	t.Helper()
	r := chartserver.New(t, chartserver.Options{TLS: true, Username: chartUser, Password: chartPassword})
	r.Add(chartserver.WebChart(t, "web", "1.0.0"))
	r.Add(chartserver.WebChart(t, "web", "1.0.1"))
	return r
}

func chartOptions(t *testing.T, r *chartserver.Repo) func(*Options) {
	return func(o *Options) {
		hopts := helmrepo.DefaultOptions()
		hopts.CacheDir = t.TempDir()
		hopts.IndexTTL = 200 * time.Millisecond
		s, err := helmrepo.New(hopts)
		if err != nil {
			t.Fatal(err)
		}
		o.ChartSource = s
		o.Credentials = func(url string) *source.Credentials {
			if url == r.URL {
				return &source.Credentials{Username: chartUser, Password: chartPassword, CAData: r.CAPEM}
			}
			return nil
		}
	}
}

func offlineEngine(t *testing.T, tweak func(*Options)) *Engine {
	t.Helper()
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "prod", Server: "https://prod.invalid", KubeVersion: "1.31.0"}}
	tweak(&opts)
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// helmTemplate runs the reference helm v3.22.0 binary and decodes what it
// prints.
func helmTemplate(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	bin := reftools.ForTest(t, reftools.Helm)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // running helm, not building it
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"template"}, args...)...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	objs, err := resource.Decode("helm template", out, resource.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func sameObjects(t *testing.T, want, got []*unstructured.Unstructured) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("helm template printed %d objects, the engine rendered %d", len(want), len(got))
	}
	for i := range want {
		if !equality.Semantic.DeepEqual(want[i].Object, got[i].Object) {
			t.Errorf("object %d differs:\nhelm template: %v\nengine: %v", i, want[i].Object, got[i].Object)
		}
	}
}

func copyApp(t *testing.T, a *Application) *Application {
	t.Helper()
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var out Application
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func writeCA(t *testing.T, r *chartserver.Repo) string {
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, r.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A chart from an HTTPS repository with basic auth and its own CA renders
// as `helm template --repo` renders it, and the app's revision is the
// version the constraint resolved to.
func TestChartFromHTTPRepositoryMatchesHelmTemplate(t *testing.T) {
	t.Parallel()
	r := chartRepo(t)
	e := offlineEngine(t, chartOptions(t, r))
	app := &Application{Spec: ApplicationSpec{
		Source: &ApplicationSource{RepoURL: r.URL, Chart: "web", TargetRevision: "1.0.x",
			Helm: &ApplicationSourceHelm{Values: "greeting: bonjour\n"}},
		Destination: ApplicationDestination{Name: "prod", Namespace: "shop"},
	}}
	app.Name = "charted"
	// As rendered (RenderManifests), as helm template prints it: Render
	// also gives namespaced objects the destination namespace.
	rm, err := e.RenderManifests(context.Background(), app, "")
	if err != nil {
		t.Fatal(err)
	}
	objs, rev := rm.Objects, rm.Revision
	if rev != "1.0.1" {
		t.Errorf("revision %q, want 1.0.1", rev)
	}
	values := filepath.Join(t.TempDir(), "inline.yaml")
	_ = os.WriteFile(values, []byte("greeting: bonjour\n"), 0o600)
	want := helmTemplate(t, "charted", "web", "--repo", r.URL, "--version", "1.0.x", "--username", chartUser, "--password", chartPassword,
		"--ca-file", writeCA(t, r), "--namespace", "shop", "--kube-version", "1.31.0", "--include-crds", "-f", values)
	sameObjects(t, want, objs)
}

// Two sources: a chart, and a folder with ref values whose prod.yaml the
// chart takes as $values/envs/prod.yaml. The output equals helm template
// with that file; the revisions are reported per source; a change to the
// values file changes the render, and a $values path that climbs out of
// the referenced tree or names no ref is refused.
func TestMultiSourceChartWithValuesFromAnotherSource(t *testing.T) {
	t.Parallel()
	r := chartRepo(t)
	e := offlineEngine(t, chartOptions(t, r))
	valuesDir := repoDir(t, map[string]string{"envs/prod.yaml": "greeting: from-values-repo\nreplicas: 3\n"})
	app := &Application{Spec: ApplicationSpec{
		Sources: []ApplicationSource{
			{RepoURL: r.URL, Chart: "web", TargetRevision: "1.0.0",
				Helm: &ApplicationSourceHelm{ValueFiles: []string{"$values/envs/prod.yaml", "$values/envs/missing.yaml"}, IgnoreMissingValueFiles: true}},
			{RepoURL: valuesDir, Ref: "values"},
		},
		Destination: ApplicationDestination{Name: "prod", Namespace: "shop"},
	}}
	app.Name = "multi"
	ctx := context.Background()
	rm, err := e.RenderManifests(ctx, app, "")
	if err != nil {
		t.Fatal(err)
	}
	objs, rev := rm.Objects, rm.Revision
	revs := strings.Split(rev, ",")
	if len(revs) != 2 || revs[0] != "1.0.0" || !strings.HasPrefix(revs[1], "sha256:") {
		t.Errorf("revisions %q, want the chart version then the folder's revision", rev)
	}
	want := helmTemplate(t, "multi", "web", "--repo", r.URL, "--version", "1.0.0", "--username", chartUser, "--password", chartPassword,
		"--ca-file", writeCA(t, r), "--namespace", "shop", "--kube-version", "1.31.0", "--include-crds", "-f", filepath.Join(valuesDir, "envs/prod.yaml"))
	sameObjects(t, want, objs)

	// The values repository changes: the render follows.
	if err := os.WriteFile(filepath.Join(valuesDir, "envs/prod.yaml"), []byte("greeting: changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	objs, _, err = e.Render(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	if g, _, _ := unstructured.NestedString(objs[0].Object, "data", "greeting"); g != "changed" {
		t.Errorf("after the values change the ConfigMap says %q", g)
	}

	// Without ignoreMissingValueFiles a missing file fails, naming it.
	strict := copyApp(t, app)
	strict.Spec.Sources[0].Helm.IgnoreMissingValueFiles = false
	if _, _, err := e.Render(ctx, strict); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing value file without ignoreMissingValueFiles: %v", err)
	}
	for vf, want := range map[string]string{
		"$values/../../../etc/passwd": "leaves the root",
		"$other/prod.yaml":            `no source has ref "other"`,
	} {
		bad := copyApp(t, app)
		bad.Spec.Sources[0].Helm.ValueFiles = []string{vf}
		if _, _, err := e.Render(ctx, bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("value file %q: %v, want %q", vf, err, want)
		}
	}
}

// A chart app on the local cluster syncs Healthy at 1.0.1 under 1.0.x;
// when 1.0.2 is published the next refreshes roll it out.
func TestChartAppRollsOutANewPatchVersion(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	r := chartRepo(t)
	e := newEngine(t, chartOptions(t, r))
	app := &Application{Spec: ApplicationSpec{
		Source:      &ApplicationSource{RepoURL: r.URL, Chart: "web", TargetRevision: "1.0.x"},
		Destination: ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
	}}
	app.Name = ns
	ctx := context.Background()
	if _, err := e.Sync(ctx, app, SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	st := refreshUntil(t, e, app, "Synced and Healthy at 1.0.1", func(s appstatus.Status) bool {
		return s.Sync == appstatus.Synced && s.Health.Code == health.Healthy && s.Revision == "1.0.1"
	})
	if len(st.Resources) != 2 {
		t.Fatalf("resources %+v", st.Resources)
	}
	r.Add(chartserver.WebChart(t, "web", "1.0.2"))
	refreshUntil(t, e, app, "OutOfSync at 1.0.2", func(s appstatus.Status) bool { return s.Sync == appstatus.OutOfSync && s.Revision == "1.0.2" })
	if _, err := e.Sync(ctx, app, SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	refreshUntil(t, e, app, "Synced and Healthy at 1.0.2", func(s appstatus.Status) bool {
		return s.Sync == appstatus.Synced && s.Health.Code == health.Healthy && s.Revision == "1.0.2"
	})
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, ns+"-settings", metav1.GetOptions{})
	if err != nil || cm.Data["version"] != "1.0.2" {
		t.Fatalf("ConfigMap after the rollout: %v %v", cm.Data, err)
	}
	// The step after: a second sync writes nothing new and stays Synced.
	if _, err := e.Sync(ctx, app, SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	refreshUntil(t, e, app, "still Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced && s.Revision == "1.0.2" })
}

// A chart from an OCI registry (Argo's bare host/path with enableOCI, and
// oci://) renders as `helm template oci://...` renders it.
func TestChartFromOCIRegistryMatchesHelmTemplate(t *testing.T) {
	t.Parallel()
	reg := chartserver.NewRegistry(t, chartUser, chartPassword)
	reg.Push("charts", chartserver.WebChart(t, "web", "1.0.0"))
	reg.Push("charts", chartserver.WebChart(t, "web", "1.0.1"))
	e := offlineEngine(t, func(o *Options) {
		hopts := helmrepo.DefaultOptions()
		hopts.CacheDir = t.TempDir()
		hopts.PlainHTTP = true
		s, err := helmrepo.New(hopts)
		if err != nil {
			t.Fatal(err)
		}
		o.ChartSource = s
		o.Credentials = func(url string) *source.Credentials {
			return &source.Credentials{Username: chartUser, Password: chartPassword, EnableOCI: !strings.HasPrefix(url, "oci://")}
		}
	})
	want := helmTemplate(t, "oci-app", "oci://"+reg.Host+"/charts/web", "--version", "1.0.x", "--plain-http",
		"--username", chartUser, "--password", chartPassword, "--namespace", "shop", "--kube-version", "1.31.0", "--include-crds")
	for _, url := range []string{reg.Host + "/charts", "oci://" + reg.Host + "/charts"} {
		app := &Application{Spec: ApplicationSpec{
			Source:      &ApplicationSource{RepoURL: url, Chart: "web", TargetRevision: "1.0.x"},
			Destination: ApplicationDestination{Name: "prod", Namespace: "shop"},
		}}
		app.Name = "oci-app"
		rm, err := e.RenderManifests(context.Background(), app, "")
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		objs, rev := rm.Objects, rm.Revision
		if rev != "1.0.1" {
			t.Errorf("%s: revision %q", url, rev)
		}
		sameObjects(t, want, objs)
	}
}

// An umbrella chart whose charts/ is empty gets its dependencies from an
// HTTPS chart repository (basic auth, private CA) and from an OCI
// registry, through the chart source's cache; the project's sourceRepos
// apply to dependency repositories too.
func TestChartDependenciesFromHTTPAndOCI(t *testing.T) {
	t.Parallel()
	r := chartRepo(t)
	reg := chartserver.NewRegistry(t, chartUser, chartPassword)
	sub := func(name string) string {
		return chartserver.Chart(t, name, "0.1.0", map[string]string{
			"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-" + name + "\ndata:\n  from: " + name + "\n",
		})
	}
	r.Add(sub("sub-http"))
	reg.Push("deps", sub("sub-oci"))
	r.Add(chartserver.Chart(t, "umbrella", "1.0.0", map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: umbrella\nversion: 1.0.0\ndependencies:\n" +
			"- name: sub-http\n  version: 0.1.x\n  repository: " + r.URL + "\n" +
			"- name: sub-oci\n  version: 0.1.0\n  repository: oci://" + reg.Host + "/deps\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-umbrella\n",
	}))
	hopts := helmrepo.DefaultOptions()
	hopts.CacheDir = t.TempDir()
	hopts.PlainHTTP = true // the registry; the chart repository is HTTPS either way
	charts, err := helmrepo.New(hopts)
	if err != nil {
		t.Fatal(err)
	}
	tweak := func(o *Options) {
		o.ChartSource = charts
		o.Credentials = func(url string) *source.Credentials {
			if url == r.URL {
				return &source.Credentials{Username: chartUser, Password: chartPassword, CAData: r.CAPEM}
			}
			return &source.Credentials{Username: chartUser, Password: chartPassword}
		}
		o.Projects = []Project{
			{ObjectMeta: metav1.ObjectMeta{Name: "open"}, Spec: ProjectSpec{SourceRepos: []string{r.URL, "oci://" + reg.Host + "/*"},
				Destinations: []ApplicationDestination{{Name: "*", Server: "*", Namespace: "*"}}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "no-oci"}, Spec: ProjectSpec{SourceRepos: []string{r.URL},
				Destinations: []ApplicationDestination{{Name: "*", Server: "*", Namespace: "*"}}}},
		}
	}
	e := offlineEngine(t, tweak)
	app := &Application{Spec: ApplicationSpec{Project: "open",
		Source:      &ApplicationSource{RepoURL: r.URL, Chart: "umbrella", TargetRevision: "1.0.0"},
		Destination: ApplicationDestination{Name: "prod", Namespace: "shop"},
	}}
	app.Name = "umb"
	objs, rev, err := e.Render(context.Background(), app)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, o := range objs {
		names[o.GetName()] = true
	}
	if rev != "1.0.0" || len(objs) != 3 || !names["umb-umbrella"] || !names["umb-sub-http"] || !names["umb-sub-oci"] {
		t.Fatalf("revision %q, objects %v", rev, names)
	}
	before := charts.Stats().Downloads
	// Another app of the same chart: the dependencies come from the cache.
	other := copyApp(t, app)
	other.Name = "umb2"
	if _, _, err := e.Render(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	if d := charts.Stats().Downloads - before; d != 0 {
		t.Errorf("a second app of the same chart downloaded %d archives", d)
	}
	denied := copyApp(t, app)
	denied.Name, denied.Spec.Project = "umb3", "no-oci"
	_, _, err = e.Render(context.Background(), denied)
	var pe *PolicyError
	if !errors.As(err, &pe) || pe.Rule != "sourceRepos" || !strings.Contains(err.Error(), "sub-oci") {
		t.Fatalf("a dependency from a repository outside the project: %v, want a sourceRepos PolicyError naming sub-oci", err)
	}
}

// Repository credentials stored the Argo CD way in a namespace of the
// cluster (a repo-creds template with the password, the CA in
// argocd-tls-certs-cm) are read with repocreds.LoadNamespace and let the
// engine read an HTTPS chart repository with basic auth.
func TestChartCredentialsFromArgoSecretsInANamespace(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	r := chartRepo(t)
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "local-charts", Namespace: ns,
		Labels: map[string]string{repocreds.SecretTypeLabel: repocreds.TypeRepoCreds}},
		StringData: map[string]string{"url": strings.TrimSuffix(r.URL, "/") + "/", "username": chartUser, "password": chartPassword, "type": "helm"}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	certs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: repocreds.TLSCertsConfig, Namespace: ns},
		Data: map[string]string{"127.0.0.1": string(r.CAPEM)}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, certs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	store, err := repocreds.LoadNamespace(ctx, cs, ns)
	if err != nil {
		t.Fatal(err)
	}
	e := offlineEngine(t, func(o *Options) {
		chartOptions(t, r)(o)
		o.Credentials = store.For
	})
	app := &Application{Spec: ApplicationSpec{
		Source:      &ApplicationSource{RepoURL: r.URL + "/", Chart: "web", TargetRevision: "1.0.0"},
		Destination: ApplicationDestination{Name: "prod", Namespace: "shop"},
	}}
	app.Name = "creds"
	objs, rev, err := e.Render(ctx, app)
	if err != nil || rev != "1.0.0" || len(objs) != 2 {
		t.Fatalf("render with Argo-stored credentials: %d objects at %q: %v", len(objs), rev, err)
	}
}

func TestPassCredentialsIsRefusedByName(t *testing.T) {
	_, err := LoadApplications(strings.NewReader(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: pass}
spec:
  source: {repoURL: "https://charts.example.com", chart: web, targetRevision: 1.x, helm: {passCredentials: true}}
  destination: {server: "https://kubernetes.default.svc", namespace: x}
`))
	if err == nil || !strings.Contains(err.Error(), "spec.source.helm.passCredentials") {
		t.Fatalf("passCredentials: %v", err)
	}
	e := offlineEngine(t, func(*Options) {})
	app := &Application{Spec: ApplicationSpec{Source: &ApplicationSource{RepoURL: "https://charts.example.com", Chart: "web",
		Helm: &ApplicationSourceHelm{PassCredentials: true}}, Destination: ApplicationDestination{Name: "prod"}}}
	app.Name = "pass"
	if _, _, err := e.Render(context.Background(), app); err == nil || !strings.Contains(err.Error(), "passCredentials") {
		t.Fatalf("render with passCredentials: %v", err)
	}
}

// countingHelm counts the renders that reach the Helm renderer (cache
// misses).
type countingHelm struct {
	*helm.Renderer
	n atomic.Int64
}

func (c *countingHelm) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	c.n.Add(1)
	return c.Renderer.Render(ctx, in)
}

// A change to the values source re-renders the app that takes its values
// from it and no other app of the same chart.
func TestValuesChangeReRendersOnlyTheAppsThatUseIt(t *testing.T) {
	t.Parallel()
	r := chartRepo(t)
	counter := &countingHelm{Renderer: helm.New(helm.DefaultOptions())}
	e := offlineEngine(t, func(o *Options) {
		chartOptions(t, r)(o)
		o.Renderers = map[render.Kind]render.Renderer{render.KindHelm: counter}
	})
	valuesDir := repoDir(t, map[string]string{"prod.yaml": "greeting: one\n"})
	withValues := &Application{Spec: ApplicationSpec{
		Sources: []ApplicationSource{
			{RepoURL: r.URL, Chart: "web", TargetRevision: "1.0.1", Helm: &ApplicationSourceHelm{ValueFiles: []string{"$values/prod.yaml"}}},
			{RepoURL: valuesDir, Ref: "values"},
		},
		Destination: ApplicationDestination{Name: "prod", Namespace: "a"},
	}}
	withValues.Name = "with-values"
	plain := &Application{Spec: ApplicationSpec{
		Source:      &ApplicationSource{RepoURL: r.URL, Chart: "web", TargetRevision: "1.0.1"},
		Destination: ApplicationDestination{Name: "prod", Namespace: "b"},
	}}
	plain.Name = "plain"
	ctx := context.Background()
	renderAll := func() {
		for _, a := range []*Application{withValues, plain} {
			if _, _, err := e.Render(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
	}
	renderAll()
	renderAll()
	if n := counter.n.Load(); n != 2 {
		t.Fatalf("%d renders for two apps rendered twice, want 2 (the second pass from the cache)", n)
	}
	if err := os.WriteFile(filepath.Join(valuesDir, "prod.yaml"), []byte("greeting: two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	renderAll()
	if n := counter.n.Load(); n != 3 {
		t.Fatalf("%d renders after the values change, want 3 (only the app that uses them)", n)
	}
}

// The same rollout with an automated sync policy under Run: the engine
// polls the repository's index (interval 200 ms here) and rolls 1.0.2 out
// on its own once it is published.
func TestAutomatedChartAppRollsOutANewPatchVersion(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	r := chartRepo(t)
	e := newEngine(t, func(o *Options) {
		chartOptions(t, r)(o)
		o.Interval = 300 * time.Millisecond
	})
	app := automated(&Application{Spec: ApplicationSpec{
		Source:      &ApplicationSource{RepoURL: r.URL, Chart: "web", TargetRevision: "1.0.x"},
		Destination: ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
	}})
	app.Name = ns
	startRun(t, e, app)
	eventually(t, 2*time.Minute, "Synced and Healthy at 1.0.1", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		return ok && st.Sync == appstatus.Synced && st.Health.Code == health.Healthy && st.Revision == "1.0.1"
	})
	r.Add(chartserver.WebChart(t, "web", "1.0.2"))
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	eventually(t, 2*time.Minute, "1.0.2 rolled out", func() bool {
		st, _ := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), ns+"-settings", metav1.GetOptions{})
		return err == nil && cm.Data["version"] == "1.0.2" && st.Sync == appstatus.Synced && st.Health.Code == health.Healthy && st.Revision == "1.0.2"
	})
	if h, _ := e.History(context.Background(), v1alpha1.KeyOf(app)); len(h) != 2 || h[1].Revisions[0] != "1.0.2" {
		t.Fatalf("history %+v", h)
	}
}

func TestChartWithAnotherToolIsRefused(t *testing.T) {
	_, err := LoadApplications(strings.NewReader(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: mixed}
spec:
  source: {repoURL: "https://charts.example.com", chart: web, kustomize: {namePrefix: x-}}
  destination: {server: "https://kubernetes.default.svc", namespace: x}
`))
	if err == nil || !strings.Contains(err.Error(), "spec.source.chart") {
		t.Fatalf("chart with kustomize: %v", err)
	}
}

// A Helm v2-style chart (apiVersion v1) declares its dependencies in
// requirements.yaml; they are fetched the same way.
func TestRequirementsYAMLDependencies(t *testing.T) {
	t.Parallel()
	r := chartserver.New(t, chartserver.Options{})
	r.Add(chartserver.Chart(t, "sub", "0.2.0", map[string]string{
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-sub}\n",
	}))
	r.Add(chartserver.Chart(t, "legacy", "1.0.0", map[string]string{
		"Chart.yaml":        "apiVersion: v1\nname: legacy\nversion: 1.0.0\n",
		"requirements.yaml": "dependencies:\n- name: sub\n  version: ~0.2.0\n  repository: " + r.URL + "\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-legacy}\n",
	}))
	e := offlineEngine(t, chartOptions(t, r))
	app := &Application{Spec: ApplicationSpec{
		Source:      &ApplicationSource{RepoURL: r.URL, Chart: "legacy", TargetRevision: "1.0.0"},
		Destination: ApplicationDestination{Name: "prod", Namespace: "shop"},
	}}
	app.Name = "legacy"
	objs, _, err := e.Render(context.Background(), app)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, o := range objs {
		names[o.GetName()] = true
	}
	if len(objs) != 2 || !names["from-sub"] || !names["from-legacy"] {
		t.Fatalf("objects %v", names)
	}
}
