package main

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestReadOnlyCommandsWriteNoState: status, diff, render and a one-off
// sync without --state-namespace leave no gitops-state ConfigMap behind;
// a state an explicit --state-namespace wrote is still read by status
// (its last operation shown) and never rewritten by a later plain sync.
func TestReadOnlyCommandsWriteNoState(t *testing.T) {
	ns := cluster.TestNamespace(t)
	appFile, _ := namedAppFixture(t, ns, "readonly")
	kc := []string{"--kubeconfig", cluster.Kubeconfig(), "--app", appFile}
	cs := clientset(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const state = "gitops-state-readonly"
	cms := cs.CoreV1().ConfigMaps("default")
	// A run of this test before the fix may have left one.
	if err := cms.Delete(ctx, state, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status"}, {"diff"}, {"render"}, {"sync"}, {"status"}, {"diff"}} {
		code, out, errOut := runCLI(t, append(args, kc...)...)
		if code == 2 {
			t.Fatalf("%v: exit 2\n%s\n%s", args, out, errOut)
		}
		if _, err := cms.Get(ctx, state, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("%v wrote ConfigMap default/%s (get: %v)", args, state, err)
		}
	}

	// A host's state (here written by an explicit --state-namespace) is read...
	t.Cleanup(func() { _ = cms.Delete(context.Background(), state, metav1.DeleteOptions{}) })
	if code, out, errOut := runCLI(t, append([]string{"sync", "--state-namespace", "default"}, kc...)...); code != 0 {
		t.Fatalf("sync --state-namespace default: exit %d\n%s\n%s", code, out, errOut)
	}
	written, err := cms.Get(ctx, state, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("an explicit --state-namespace wrote no state: %v", err)
	}
	code, out, errOut := runCLI(t, append([]string{"status"}, kc...)...)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	mustContain(t, "status reading the kept state", out, "Last operation: Succeeded (manual sync of ", "Reconciled: "+time.Now().Format("2006-"))
	// ...and never written by a command that did not ask for it.
	if code, out, errOut := runCLI(t, append([]string{"sync"}, kc...)...); code != 0 {
		t.Fatalf("sync: exit %d\n%s\n%s", code, out, errOut)
	}
	after, err := cms.Get(ctx, state, metav1.GetOptions{})
	if err != nil || after.ResourceVersion != written.ResourceVersion {
		t.Fatalf("a plain sync rewrote the kept state (resourceVersion %s -> %s, %v)", written.ResourceVersion, after.ResourceVersion, err)
	}
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		if strings.HasPrefix(cm.Name, "gitops-state-") {
			t.Errorf("state ConfigMap %s/%s written in the app's namespace", ns, cm.Name)
		}
	}
}
