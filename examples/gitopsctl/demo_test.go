package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDemoEndToEnd runs the whole tour against the shared cluster, as
// `gitopsctl demo --keep --kubeconfig` would against a real one: it checks
// the narration, that --keep serves until Ctrl-C and then stops cleanly,
// and what the tour claims on the cluster itself.
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
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	demoCtx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	start := time.Now()
	go func() {
		done <- run(demoCtx, []string{"demo", "--keep", "--kubeconfig", cluster.Kubeconfig(), "--namespace-prefix", prefix, "--timeout", "150s"}, &stdout, &stderr)
	}()
	err := waitUntil(ctx, 3*time.Minute, func() (bool, error) {
		select {
		case code := <-done:
			return false, fmt.Errorf("demo ended with exit %d before --keep", code)
		default:
		}
		return strings.Contains(stdout.String(), "keeps running until Ctrl-C"), nil
	})
	if err != nil {
		t.Fatalf("the tour did not finish: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("tour took %s", time.Since(start).Round(time.Second))

	// --keep: the Git server still serves until Ctrl-C, then everything
	// stops and the exit status is 0.
	m := regexp.MustCompile(`git clone (\S+)`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no clone URL printed:\n%s", stdout.String())
	}
	refs := m[1] + "/info/refs?service=git-upload-pack"
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(refs)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("Git server not serving during --keep: %v %v", err, resp)
	}
	resp.Body.Close()
	interrupt()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after Ctrl-C\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the demo did not stop within 30 s of Ctrl-C")
	}
	if resp, err := client.Get(refs); err == nil {
		resp.Body.Close()
		t.Fatal("the Git server still answers after the demo stopped")
	}

	out := stdout.String()
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
	if strings.Contains(out, " pruned ") {
		t.Errorf("the tour pruned something (objects of another engine?):\n%s", out)
	}
	// Steps happen in order.
	last := -1
	for _, step := range []string{"[3/6]", "[4/6]", "[5/6]", "[6/6]"} {
		i := strings.Index(out, step)
		if i < last {
			t.Fatalf("%s printed out of order:\n%s", step, out)
		}
		last = i
	}

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
