package controller_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	gosync "sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/config"
	"github.com/kubegitops/gitops/examples/operator/controller"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/internal/testfiles/testengine"
	"github.com/kubegitops/gitops/testenv"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.RunMain(m, testenv.DefaultOptions(), &cluster))
}

const inCluster = "https://kubernetes.default.svc"

var (
	crdOnce gosync.Once
	crdErr  error
)

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// newClient returns a direct (uncached) client of the test cluster, with
// the CRD installed.
func newClient(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(cluster.Config(), client.Options{Scheme: newScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	crdOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		crdErr = config.Install(ctx, c, time.Minute)
	})
	if crdErr != nil {
		t.Fatal(crdErr)
	}
	return c
}

// newEngine returns an engine whose one cluster is the test cluster, with
// its changes bridged to events.
func newEngine(t *testing.T, events *controller.ClusterEvents, tweak func(*gitops.Options)) *gitops.Engine {
	t.Helper()
	return testengine.New(t, cluster.Config(), func(opts *gitops.Options) {
		if events != nil {
			opts.NewClusterCache = events.NewClusterCache
		}
		if tweak != nil {
			tweak(opts)
		}
	})
}

// operator is a running manager reconciling the Applications of ns.
type operator struct {
	ns string
	c  client.Client
}

// startOperator runs the operator for a namespace of its own until the test
// ends, as main does; tweak, when set, changes the engine's options.
func startOperator(t *testing.T, tweak func(*gitops.Options)) *operator {
	t.Helper()
	c := newClient(t)
	ns := cluster.TestNamespace(t)
	stop := runOperator(t, c, ns, tweak)
	t.Cleanup(func() {
		stop()
		// Applications left with a finalizer (a failed test) must not hold
		// their namespace's deletion.
		list := &v1alpha1.ApplicationList{}
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		if err := c.List(cctx, list, client.InNamespace(ns)); err == nil {
			for i := range list.Items {
				_ = c.Patch(cctx, &list.Items[i], client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
			}
		}
	})
	return &operator{ns: ns, c: c}
}

// runOperator starts one operator process (an engine and a manager) whose
// control namespace is ns, as main does; stop ends it, as a kill would
// (nothing is saved after its context ends), and waits until it is gone.
func runOperator(t *testing.T, c client.Client, ns string, tweak func(*gitops.Options)) (stop func()) {
	t.Helper()
	return runOperatorWatching(t, c, ns, nil, tweak)
}

// runOperatorWatching is runOperator serving the Applications of the
// namespaces watched too (-application-namespaces).
func runOperatorWatching(t *testing.T, c client.Client, ns string, watched []string, tweak func(*gitops.Options)) (stop func()) {
	t.Helper()
	return runOperatorWith(t, c, ns, watched, tweak, nil)
}

// runOperatorWith is runOperatorWatching with ctl changing the
// controller's options (after the defaults and the engine are set).
func runOperatorWith(t *testing.T, c client.Client, ns string, watched []string, tweak func(*gitops.Options), ctl func(*controller.Options)) (stop func()) {
	t.Helper()
	events := controller.NewClusterEvents(ns)
	engine := newEngine(t, events, func(o *gitops.Options) {
		o.ControlNamespace = ns
		if tweak != nil {
			tweak(o)
		}
	})
	mgr, err := manager.New(cluster.Config(), manager.Options{
		Scheme:                 newScheme(t),
		Logger:                 logr.Discard(),
		Cache:                  cache.Options{DefaultNamespaces: controller.CacheNamespaces(ns, watched)},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Every test runs its own manager in this one process.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := controller.DefaultOptions()
	opts.Engine, opts.Events = engine, events
	opts.SelfHealTimeout = time.Second
	if ctl != nil {
		ctl(&opts)
	}
	r, err := controller.New(mgr.GetClient(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once gosync.Once
	return func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
			engine.Close()
		})
	}
}

// repoDir writes files into a folder that serves as an app's source.
func repoDir(t *testing.T, files map[string]string) string { return testfiles.Tree(t, files) }

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

const webManifests = testfiles.WebApp

// appSpec describes a test Application.
type appSpec struct {
	name, repo, dest string
	automated        bool
	finalizers       []string
}

// newApp returns the custom resource of an app whose source is the
// folder repo/app, deployed to namespace dest of the operator's cluster.
func newApp(ns string, s appSpec) *v1alpha1.Application {
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: s.name, Finalizers: s.finalizers},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: s.repo, Path: "app"},
			Destination: v1alpha1.ApplicationDestination{Server: inCluster, Namespace: s.dest},
		},
	}
	if s.automated {
		app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true}}
	}
	return app
}

// ref is the Application ns/name, to patch or delete.
func ref(ns, name string) *v1alpha1.Application {
	return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func (o *operator) create(t *testing.T, app *v1alpha1.Application) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := o.c.Create(ctx, app); err != nil {
		t.Fatalf("create %s: %v", app.Name, err)
	}
}

// patch merge-patches the app.
func (o *operator) patch(t *testing.T, name string, patch map[string]any) {
	t.Helper()
	data, err := json.Marshal(patch)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := o.c.Patch(ctx, ref(o.ns, name), client.RawPatch(types.MergePatchType, data)); err != nil {
		t.Fatalf("patch %s: %v", name, err)
	}
}

// observed is an Application as read back.
type observed struct{ *v1alpha1.Application }

func (o observed) String() string {
	data, _ := json.MarshalIndent(o.Status, "", "  ")
	return string(data)
}

// waitApp polls the app until cond holds, failing after a deadline with
// the last status seen.
func (o *operator) waitApp(t *testing.T, name, what string, cond func(observed) bool) observed {
	t.Helper()
	last := observed{&v1alpha1.Application{}}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		app := &v1alpha1.Application{}
		if err := o.c.Get(ctx, types.NamespacedName{Namespace: o.ns, Name: name}, app); err != nil {
			return false, nil
		}
		last = observed{app}
		return cond(last), nil
	})
	if err != nil {
		t.Fatalf("app %s: waiting for %s: %v; last status:\n%s", name, what, err, last)
	}
	return last
}

// waitGone waits until the app no longer exists.
func (o *operator) waitGone(t *testing.T, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		err := o.c.Get(ctx, types.NamespacedName{Namespace: o.ns, Name: name}, &v1alpha1.Application{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("app %s still exists: %v", name, err)
	}
}

func syncedHealthy(o observed) bool {
	return o.Status.Sync.Status == "Synced" && o.Status.Health.Status == "Healthy"
}

func rowsStatus(rows []v1alpha1.ResourceStatus) map[string]string {
	out := map[string]string{}
	for _, r := range rows {
		out[r.Kind+"/"+r.Name] = r.Status
	}
	return out
}
