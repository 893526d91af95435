package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubegitops/gitops/internal/redistest"
	"github.com/kubegitops/gitops/shard"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAgentAsAReplica runs the agent with --shard-namespace and
// --redis-addr: it holds its Lease while it runs, syncs the app it owns
// (alone in the group, it owns every app), and releases the Lease on stop.
func TestAgentAsAReplica(t *testing.T) {
	ns := cluster.TestNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	redisSrv := redistest.Start(t)
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "deploy/cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	apps := filepath.Join(t.TempDir(), "apps.yaml")
	app := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: %s}
spec:
  source: {repoURL: %s, path: deploy}
  destination: {server: https://kubernetes.default.svc, namespace: %s}
  syncPolicy: {automated: {prune: true}}
`, ns, repo, ns)
	if err := os.WriteFile(apps, []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	agentCtx, stop := context.WithCancel(ctx)
	defer stop()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(agentCtx, []string{"agent", "--apps", apps, "--kubeconfig", cluster.Kubeconfig(),
			"--shard-namespace", ns, "--shard-id", "replica-a", "--redis-addr", redisSrv.Addr}, &stdout, &stderr)
	}()
	cs := clientset(t)
	if err := waitUntil(ctx, time.Minute, func() (bool, error) {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "shared", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the replica never synced its app: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	holder := func() string {
		leases, err := cs.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{LabelSelector: shard.LabelGroup + "=gitops"})
		if err != nil || len(leases.Items) != 1 || leases.Items[0].Spec.HolderIdentity == nil {
			return ""
		}
		return *leases.Items[0].Spec.HolderIdentity
	}
	if h := holder(); h != "replica-a" {
		t.Fatalf("lease holder %q, want replica-a", h)
	}
	mustContain(t, "agent output", stdout.String(), "as replica replica-a of group gitops", "renders shared through Redis at "+redisSrv.Addr)
	stop()
	if code := <-done; code != 0 {
		t.Fatalf("agent exited %d\nstderr:\n%s", code, stderr.String())
	}
	if h := holder(); h != "" {
		t.Fatalf("lease still held by %q after the agent stopped", h)
	}
}
