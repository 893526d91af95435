package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDemoEndToEnd runs the whole tour against the shared cluster, as
// `gitopsctl demo --kubeconfig` would against a real one, and checks what
// it claims on the cluster itself.
func TestDemoEndToEnd(t *testing.T) {
	prefix := fmt.Sprintf("demo-%06d", rand.IntN(1_000_000))
	cs := clientset(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, s := range []string{"guestbook", "helm", "kustomize"} {
			_ = cs.CoreV1().Namespaces().Delete(ctx, prefix+"-"+s, metav1.DeleteOptions{})
		}
	})
	start := time.Now()
	code, out, errOut := runCLI(t, "demo", "--kubeconfig", cluster.Kubeconfig(), "--namespace-prefix", prefix, "--timeout", "150s")
	if code != 0 {
		t.Fatalf("demo: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	t.Logf("demo took %s", time.Since(start).Round(time.Second))
	mustContain(t, "demo output", out,
		"[1/6] Using the cluster of your kubeconfig",
		"[2/6] Serving the demo repository over Git smart HTTP",
		"PreSync 0", "batch/Job "+prefix+"-guestbook/migrate-schema (hook)",
		"Sync 1", "apps/Deployment "+prefix+"-guestbook/guestbook",
		"HealthChanged  guestbook", "health=Healthy",
		"self-heal restored",
		`ConfigMap message "hello from git, v2"`,
		"[6/6] Summary",
		"kubectl delete namespace")
	// Steps happen in order.
	last := -1
	for _, step := range []string{"[3/6]", "[4/6]", "[5/6]", "[6/6]"} {
		i := strings.Index(out, step)
		if i < last {
			t.Fatalf("%s printed out of order:\n%s", step, out)
		}
		last = i
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dep, err := cs.AppsV1().Deployments(prefix+"-guestbook").Get(ctx, "guestbook", metav1.GetOptions{})
	if err != nil || dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
		t.Fatalf("guestbook Deployment after the demo: %v (err %v), want 2 replicas from the commit", dep.Spec.Replicas, err)
	}
	cm, err := cs.CoreV1().ConfigMaps(prefix+"-guestbook").Get(ctx, "guestbook-config", metav1.GetOptions{})
	if err != nil || cm.Data["message"] != "hello from git, v2" {
		t.Fatalf("guestbook ConfigMap after the demo: %v (err %v)", cm.Data, err)
	}
	if _, err := cs.BatchV1().Jobs(prefix+"-guestbook").Get(ctx, "migrate-schema", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the PreSync hook was not deleted after success (HookSucceeded): %v", err)
	}
	helm, err := cs.AppsV1().Deployments(prefix+"-helm").Get(ctx, "cache-redis", metav1.GetOptions{})
	if err != nil || *helm.Spec.Replicas != 2 {
		t.Fatalf("Helm release Deployment: %v", err)
	}
	web, err := cs.AppsV1().Deployments(prefix+"-kustomize").Get(ctx, "demo-web", metav1.GetOptions{})
	if err != nil || *web.Spec.Replicas != 2 {
		t.Fatalf("Kustomize overlay Deployment: %v", err)
	}
}
