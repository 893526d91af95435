//go:build unix

package testenv

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

var cluster *Cluster

func TestMain(m *testing.M) {
	if os.Getenv(envOrphanHelper) != "" {
		os.Exit(orphanHelper())
	}
	os.Exit(RunMain(m, DefaultOptions(), &cluster))
}

func clientset(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func waitUntil(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestDeploymentBecomesAvailable(t *testing.T) {
	t.Parallel()
	cs, ns := clientset(t), cluster.TestNamespace(t)
	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	ctx := context.Background()
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 2*time.Minute, "3/3 available replicas", func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue && d.Status.AvailableReplicas == 3 {
				return true, nil
			}
		}
		return false, nil
	})
}

func TestJobCompletes(t *testing.T) {
	t.Parallel()
	cs, ns := clientset(t), cluster.TestNamespace(t)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "once"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "once", Image: "busybox"}},
		}}},
	}
	ctx := context.Background()
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 2*time.Minute, "the Job to complete", func(ctx context.Context) (bool, error) {
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, "once", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

func TestDeletedNamespaceIsFinalised(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ctx := context.Background()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "doomed-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "content"}, Data: map[string]string{"a": "b"}}
	if _, err := cs.CoreV1().ConfigMaps(ns.Name).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 2*time.Minute, "the namespace to be finalised", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// Not parallel: it takes the API server away from the other tests.
func TestRestartAPIServer(t *testing.T) {
	cs := clientset(t)
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, err := cs.CoreV1().ConfigMaps(ns).Get(short, "before", metav1.GetOptions{})
	cancel()
	if err == nil {
		t.Fatal("the API server answered while stopped")
	}
	if err := cluster.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	// The same client works again, and the data survived.
	waitUntil(t, time.Minute, "the old client to work again", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "before", metav1.GetOptions{})
		return err == nil, nil
	})
	if err := cluster.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("write after restart: %v", err)
	}
}

func TestKubeconfigAndVersion(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(cluster.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), cluster.Server()) {
		t.Fatal("kubeconfig does not name the server")
	}
	v, err := clientset(t).Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != KubernetesVersion {
		t.Fatalf("server version %q, want %q (ldflags not applied?)", v.GitVersion, KubernetesVersion)
	}
}

// A second, API-server-only cluster with a restricted user: it starts
// quickly, and the user can do only what RBAC grants.
func TestAPIServerOnlyWithRestrictedUser(t *testing.T) {
	t.Parallel()
	opts := DefaultOptions()
	opts.APIServerOnly = true
	opts.Users = []User{{Name: "alice", Groups: []string{"team-a"}}}
	c, err := Start(context.Background(), opts) // opts.StartTimeout bounds the start
	if err != nil {
		t.Fatal(err)
	}
	dir := c.Dir()
	defer func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("cluster folder %s left behind", dir)
		}
	}()
	admin, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	userCfg, err := c.UserConfig("alice")
	if err != nil {
		t.Fatal(err)
	}
	alice, err := kubernetes.NewForConfig(userCfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := alice.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("alice listed secrets: err = %v", err)
	}
	if _, err := admin.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("admin cannot list secrets: %v", err)
	}
	if _, err := c.UserConfig("bob"); err == nil {
		t.Fatal("unknown user accepted")
	}
	// No node side: no nodes at all.
	nodes, err := admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 0 {
		t.Fatalf("nodes = %v, err = %v", len(nodes.Items), err)
	}
}

// Once built (TestMain's cluster is), the programs are found: EnsureBinaries
// builds nothing (a build is logged) and returns every path.
func TestEnsureBinariesIsCached(t *testing.T) {
	t.Parallel()
	opts := DefaultBuildOptions()
	var built []string
	var mu sync.Mutex
	opts.Log = func(format string, args ...any) { mu.Lock(); built = append(built, format); mu.Unlock() }
	b, err := EnsureBinaries(context.Background(), true, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != 0 {
		t.Fatalf("built programs the cluster already had: %v", built)
	}
	for _, p := range []string{b.Etcd, b.APIServer, b.ControllerManager, b.Scheduler, b.Kwok, b.KwokStages} {
		if st, err := os.Stat(p); p == "" || err != nil || !st.Mode().IsRegular() {
			t.Fatalf("missing binary in %+v", b)
		}
	}
}

func TestAttachToExternalCluster(t *testing.T) {
	t.Setenv(EnvKubeconfig, cluster.Kubeconfig())
	c, err := Start(context.Background(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ProcessCPU(); err != ErrExternal {
		t.Fatalf("ProcessCPU of an external cluster: %v, want ErrExternal", err)
	}
	if !c.External() || c.RestartAPIServer(context.Background()) != ErrExternal || c.Stop() != nil {
		t.Fatal("external cluster not treated as external")
	}
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		t.Fatal(err)
	}
}

// ProcessCPU names every process of the cluster, and the API server's CPU
// time grows with the requests it serves.
func TestProcessCPU(t *testing.T) {
	t.Parallel()
	before, err := cluster.ProcessCPU()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
		if _, ok := before[name]; !ok {
			t.Errorf("ProcessCPU has no %s: %v", name, before)
		}
	}
	if before["kube-apiserver"] <= 0 {
		t.Fatalf("the API server used %s of CPU to start, want more than none", before["kube-apiserver"])
	}
	cs := clientset(t)
	waitUntil(t, time.Minute, "the API server's CPU time to grow", func(ctx context.Context) (bool, error) {
		for range 50 {
			if _, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
				return false, err
			}
		}
		after, err := cluster.ProcessCPU()
		if err != nil {
			return false, err
		}
		return after["kube-apiserver"] > before["kube-apiserver"], nil
	})
}
