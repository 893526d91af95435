package appsets_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	gosync "sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/appsets"
	"github.com/kubegitops/gitops/examples/operator/config"
	"github.com/kubegitops/gitops/examples/operator/controller"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/testenv"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"
)

// The garbage collector (kube-controller-manager) deletes a deleted set's
// Applications, so the cluster runs its controllers.
var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.RunMain(m, testenv.DefaultOptions(), &cluster))
}

var (
	crdOnce gosync.Once
	crdErr  error
)

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// installCRDs installs the operator's CRDs once per test binary.
func installCRDs(t *testing.T, c client.Client) {
	t.Helper()
	crdOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		crdErr = config.Install(ctx, c, time.Minute)
	})
	if crdErr != nil {
		t.Fatal(crdErr)
	}
}

// env is a running operator (the Application and ApplicationSet
// reconcilers in one manager, as main wires them) serving namespace ns,
// a direct client, and a Git server.
type env struct {
	ns   string
	c    client.Client
	cs   kubernetes.Interface
	git  *gitserver.Server
	sets *appsets.Reconciler
}

// start runs the operator for a namespace of its own until the test ends;
// tweak changes the engine's options.
func start(t *testing.T, tweak func(*gitops.Options)) *env {
	t.Helper()
	return startWith(t, tweak, false)
}

// startWith is start; with projects, the AppProjects of the namespace
// are the engine's projects, as in the operator's main.
func startWith(t *testing.T, tweak func(*gitops.Options), projects bool) *env {
	t.Helper()
	return startSets(t, tweak, projects, nil)
}

// startSets is startWith; setsTweak changes the ApplicationSet
// reconciler's options.
func startSets(t *testing.T, tweak func(*gitops.Options), projects bool, setsTweak func(*appsets.Options)) *env {
	t.Helper()
	c, err := client.New(cluster.Config(), client.Options{Scheme: newScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	installCRDs(t, c)
	gs := testfiles.GitServer(t, gitserver.DefaultOptions())
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	ns := cluster.TestNamespace(t)
	events := controller.NewClusterEvents(ns)
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "in-cluster", Server: "https://kubernetes.default.svc", Config: cluster.Config()}}
	opts.NewClusterCache = events.NewClusterCache
	opts.ControlNamespace = ns
	opts.Sync.WaveTimeout = time.Minute
	if tweak != nil {
		tweak(&opts)
	}
	engine, err := gitops.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := manager.New(cluster.Config(), manager.Options{
		Scheme: newScheme(t),
		// A sink that drops everything (logr.Discard's nil sink would make
		// controller-runtime fall back to its unset global logger).
		Logger:                 funcr.New(func(string, string) {}, funcr.Options{}),
		Cache:                  cache.Options{DefaultNamespaces: controller.CacheNamespaces(ns, nil)},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Every test runs its own manager in this one process.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	copts := controller.DefaultOptions()
	copts.Engine, copts.Events = engine, events
	var projs *controller.Projects
	if projects {
		projs = &controller.Projects{Engine: engine, Namespace: ns}
		copts.Projects = projs
	}
	apps, err := controller.New(mgr.GetClient(), copts)
	if err != nil {
		t.Fatal(err)
	}
	if err := apps.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	aopts := appsets.DefaultOptions()
	aopts.Engine, aopts.ControllerNamespace, aopts.Projects = engine, ns, projs
	if setsTweak != nil {
		setsTweak(&aopts)
	}
	sets, err := appsets.New(mgr.GetClient(), aopts)
	if err != nil {
		t.Fatal(err)
	}
	if err := sets.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
		engine.Close()
		// Applications and sets left with finalizers (a failed test) must
		// not hold their namespace's deletion.
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		unfinalize := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
		var al v1alpha1.ApplicationList
		if err := c.List(cctx, &al, client.InNamespace(ns)); err == nil {
			for i := range al.Items {
				_ = c.Patch(cctx, &al.Items[i], unfinalize)
			}
		}
		var sl v1alpha1.ApplicationSetList
		if err := c.List(cctx, &sl, client.InNamespace(ns)); err == nil {
			for i := range sl.Items {
				_ = c.Patch(cctx, &sl.Items[i], unfinalize)
			}
		}
	})
	return &env{ns: ns, c: c, cs: cs, git: gs, sets: sets}
}

// repo creates a repository on the Git server and returns its URL.
func (e *env) repo(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	fsys := fstest.MapFS{}
	for p, body := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(body)}
	}
	if _, err := e.git.CreateRepository(context.Background(), name, fsys); err != nil {
		t.Fatal(err)
	}
	return e.git.RepoURL(name)
}

// commit writes changes (nil deletes a file) to a repository.
func (e *env) commit(t *testing.T, repo, message string, changes map[string]string) {
	t.Helper()
	ch := map[string][]byte{}
	for p, body := range changes {
		if body == "" {
			ch[p] = nil
			continue
		}
		ch[p] = []byte(body)
	}
	if _, err := e.git.Commit(context.Background(), repo, message, ch); err != nil {
		t.Fatal(err)
	}
}

func configMap(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {k: v}\n", name)
}

// createSet creates an ApplicationSet from YAML in the operator's namespace.
func (e *env) createSet(t *testing.T, manifest string) *v1alpha1.ApplicationSet {
	t.Helper()
	set := &v1alpha1.ApplicationSet{}
	if err := yaml.UnmarshalStrict([]byte(manifest), set); err != nil {
		t.Fatalf("set manifest: %v", err)
	}
	set.Namespace = e.ns
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.c.Create(ctx, set); err != nil {
		t.Fatalf("create set %s: %v", set.Name, err)
	}
	return set
}

// patch merge-patches an object of the operator's namespace.
func (e *env) patch(t *testing.T, obj client.Object, name, patch string) {
	t.Helper()
	obj.SetNamespace(e.ns)
	obj.SetName(name)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("patch %s: %v", name, err)
	}
}

// deadline bounds every wait of these tests.
const deadline = 2 * time.Minute

// eventually polls cond until it holds, failing after the deadline with
// what the last poll said.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, deadline, true, func(context.Context) (bool, error) {
		ok, msg := cond()
		last = msg
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; last seen: %s", what, err, last)
	}
}

// app reads an Application of the operator's namespace (nil when absent).
func (e *env) app(t *testing.T, name string) *v1alpha1.Application {
	t.Helper()
	a := &v1alpha1.Application{}
	err := e.c.Get(context.Background(), types.NamespacedName{Namespace: e.ns, Name: name}, a)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get application %s: %v", name, err)
	}
	return a
}

// set reads an ApplicationSet of the operator's namespace (nil when absent).
func (e *env) set(t *testing.T, name string) *v1alpha1.ApplicationSet {
	t.Helper()
	s := &v1alpha1.ApplicationSet{}
	err := e.c.Get(context.Background(), types.NamespacedName{Namespace: e.ns, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get applicationset %s: %v", name, err)
	}
	return s
}

// waitSynced waits until every named Application reports Synced and Healthy.
func (e *env) waitSynced(t *testing.T, names ...string) {
	t.Helper()
	eventually(t, strings.Join(names, ", ")+" Synced and Healthy", func() (bool, string) {
		for _, n := range names {
			a := e.app(t, n)
			if a == nil {
				return false, n + " does not exist"
			}
			if a.Status.Sync.Status != "Synced" || a.Status.Health.Status != "Healthy" {
				return false, fmt.Sprintf("%s: %s/%s %v", n, a.Status.Sync.Status, a.Status.Health.Status, a.Status.Conditions)
			}
		}
		return true, ""
	})
}

// waitGone waits until the named Application no longer exists.
func (e *env) waitGone(t *testing.T, name string) {
	t.Helper()
	eventually(t, name+" deleted", func() (bool, string) {
		a := e.app(t, name)
		if a == nil {
			return true, ""
		}
		return false, fmt.Sprintf("finalizers %v, deleting %v", a.Finalizers, a.DeletionTimestamp != nil)
	})
}

// condition returns a set's condition of a type.
func condition(s *v1alpha1.ApplicationSet, typ string) (v1alpha1.ApplicationSetCondition, bool) {
	for _, c := range s.Status.Conditions {
		if c.Type == typ {
			return c, true
		}
	}
	return v1alpha1.ApplicationSetCondition{}, false
}

// configMapExists reports whether a ConfigMap exists.
func (e *env) configMapExists(t *testing.T, ns, name string) bool {
	t.Helper()
	_, err := e.cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("get configmap %s/%s: %v", ns, name, err)
	}
	return err == nil
}

// ownedBy reports whether the set controls the Application.
func ownedBy(a *v1alpha1.Application, s *v1alpha1.ApplicationSet) bool {
	ref := metav1.GetControllerOf(a)
	return ref != nil && ref.UID == s.UID && ref.Kind == "ApplicationSet" && ref.Name == s.Name
}
