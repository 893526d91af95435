//go:build unix

package testenv

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Runner is what RunMain needs of a *testing.M.
type Runner interface{ Run() int }

// RunMain starts a cluster with opts, stores it in *cluster, runs the tests
// and stops the cluster, returning the exit code for os.Exit. The start is
// bounded by opts.StartTimeout; building a missing program (a test run
// outside make, whose tools stage builds them all first) has no deadline:
// its time is the machine's, not the tests'.
func RunMain(m Runner, opts Options, cluster **Cluster) int {
	c, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*cluster = c
	defer c.Stop()
	return m.Run()
}

var unsafeNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// TestNamespace creates a namespace for t, named after the test, and deletes
// it when the test ends. Tests that each use their own namespace can share
// one cluster and run in parallel.
func (c *Cluster) TestNamespace(t testing.TB) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	prefix := unsafeNameChars.ReplaceAllString(strings.ToLower(t.Name()), "-")
	if len(prefix) > 40 {
		prefix = prefix[:40]
	}
	prefix = strings.Trim(prefix, "-") + "-"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("testenv: create namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}
