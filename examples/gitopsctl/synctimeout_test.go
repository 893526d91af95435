package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestSyncReturnsWithALoadBalancerProgressing syncs a Service of type
// LoadBalancer on a cluster without a load-balancer controller, so it
// stays Progressing. It is in the last wave (a wave before the last waits
// for its health, in Argo CD too): sync waits for the operation only and returns its
// result; --health with --timeout gives up after the timeout and names
// what is still Progressing; --async is refused, as no controller would
// carry the operation on once gitopsctl exits.
func TestSyncReturnsWithALoadBalancerProgressing(t *testing.T) {
	ns := cluster.TestNamespace(t)
	appFile, repo := namedAppFixture(t, ns, "lb")
	lb := "apiVersion: v1\nkind: Service\nmetadata:\n  name: front\n  annotations:\n    argocd.argoproj.io/sync-wave: \"2\"\nspec:\n  type: LoadBalancer\n  selector: {app: web}\n  ports:\n    - port: 80\n"
	if err := os.WriteFile(filepath.Join(repo, "lb.yaml"), []byte(lb), 0o644); err != nil {
		t.Fatal(err)
	}
	kc := []string{"--app", appFile, "--kubeconfig", cluster.Kubeconfig()}
	cliWithin := func(limit time.Duration, args ...string) (int, string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		var stdout, stderr bytes.Buffer
		start := time.Now()
		code := run(ctx, append(args, kc...), &stdout, &stderr)
		if ctx.Err() != nil {
			t.Fatalf("%v did not return within %s (exit %d after %s)\n%s\n%s", args, limit, code, time.Since(start), stdout.String(), stderr.String())
		}
		return code, stdout.String(), stderr.String()
	}

	code, out, errOut := cliWithin(90*time.Second, "sync")
	if code != 0 {
		t.Fatalf("sync: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "sync output", out, "Result: Succeeded")
	if !regexp.MustCompile(`Sync 2\s+Service ` + ns + `/front\s+created\s+Succeeded\s+Progressing`).MatchString(out) {
		t.Errorf("no progress row says the Service was created and is Progressing:\n%s", out)
	}

	code, out, errOut = cliWithin(90*time.Second, "sync", "--health", "--timeout", "5s")
	if code != 1 {
		t.Fatalf("sync --health --timeout 5s: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	t.Logf("sync --health --timeout 5s:\n%s%s", out, errOut)
	mustContain(t, "sync --health --timeout 5s", errOut, "timed out after 5s", "Service "+ns+"/front", "Progressing")

	// The step after: the objects are all in place, so the next refresh
	// says Synced even though the Service never turns Healthy.
	code, out, _ = cliWithin(90*time.Second, "status")
	if code != 0 {
		t.Fatalf("status: exit %d", code)
	}
	mustContain(t, "status after the syncs", out, "Sync:      Synced", "Health:    Progressing")

	code, _, errOut = cliWithin(30*time.Second, "sync", "--async")
	if code != 2 {
		t.Fatalf("sync --async: exit %d, want 2\n%s", code, errOut)
	}
	mustContain(t, "sync --async", errOut, "--async")
	if code, _, errOut := cliWithin(30*time.Second, "sync", "--timeout", "soon"); code != 2 {
		t.Fatalf("sync --timeout soon: exit %d, want 2\n%s", code, errOut)
	}
}
