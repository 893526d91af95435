package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubegitops/gitops/internal/testtools"
)

// syncBuffer is a bytes.Buffer safe for a writer process and a reading test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestClusterUp runs the real binary as a user would: it must write a
// kubeconfig that a client can use, and stop cleanly on Ctrl-C.
func TestClusterUp(t *testing.T) {
	dir := t.TempDir()
	// make tools installed gitopsctl (with -race, as vet and the tests
	// compile every package); outside make it is installed here, with no
	// deadline.
	bin, err := testtools.Gitopsctl(context.Background())
	if err != nil {
		t.Fatalf("%v (run `make tools` to build the programs the tests run)", err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cmd := exec.Command(bin, "cluster", "up", "--kubeconfig-out", kubeconfig)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		return strings.Contains(stdout.String(), "Press Ctrl-C"), nil
	})
	if err != nil {
		t.Fatalf("cluster never came up: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "export KUBECONFIG="+kubeconfig) {
		t.Fatalf("no usage hint printed:\n%s", stdout.String())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 1 || !nodeReady(nodes.Items[0]) {
		t.Fatalf("want one Ready node, got %d", len(nodes.Items))
	}

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after Ctrl-C: %v\n%s", err, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("did not stop within a minute of Ctrl-C")
	}
	if !strings.Contains(stdout.String(), "Stopped.") {
		t.Fatalf("no clean stop:\n%s", stdout.String())
	}
	if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
		t.Fatal("kubeconfig left behind for a stopped cluster")
	}
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func TestUnknownCommand(t *testing.T) {
	var out bytes.Buffer
	if code := run(context.Background(), []string{"nope"}, &out, &out); code != 2 || !strings.Contains(out.String(), "unknown command") {
		t.Fatalf("code %d, output %q", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), nil, &out, &out); code != 2 || !strings.Contains(out.String(), "cluster") {
		t.Fatalf("usage not printed: %q", out.String())
	}
}
