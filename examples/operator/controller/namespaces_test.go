package controller_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestApplicationsOfTwoNamespaces: an operator serving its own namespace
// and another (-application-namespaces) syncs an Application named web in
// each; the other namespace's objects are tracked as "<namespace>_web"
// (Argo CD's apps in any namespace), drift of them reaches that app and is
// healed, and deleting it leaves the first app reconciled.
func TestApplicationsOfTwoNamespaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)
	control, team := cluster.TestNamespace(t), cluster.TestNamespace(t)
	destA, destB := cluster.TestNamespace(t), cluster.TestNamespace(t)
	stop := runOperatorWatching(t, c, control, []string{team}, nil)
	t.Cleanup(stop)
	kube, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	repo := repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"})
	inControl, inTeam := &operator{ns: control, c: c}, &operator{ns: team, c: c}
	inControl.create(t, newApp(control, appSpec{name: "web", repo: repo, dest: destA, automated: true}))
	inTeam.create(t, newApp(team, appSpec{name: "web", repo: repo, dest: destB, automated: true}))
	inControl.waitApp(t, "web", "Synced", syncedHealthy)
	inTeam.waitApp(t, "web", "Synced", syncedHealthy)

	a, errA := kube.CoreV1().ConfigMaps(destA).Get(ctx, "cm", metav1.GetOptions{})
	b, errB := kube.CoreV1().ConfigMaps(destB).Get(ctx, "cm", metav1.GetOptions{})
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if id := a.Annotations[resource.AnnotationTrackingID]; !strings.HasPrefix(id, "web:") {
		t.Errorf("the control namespace's app tracks as %q", id)
	}
	if id := b.Annotations[resource.AnnotationTrackingID]; !strings.HasPrefix(id, team+"_web:") {
		t.Errorf("the other namespace's app tracks as %q", id)
	}

	// Drift of the other namespace's object is healed through the events.
	if err := kube.CoreV1().ConfigMaps(destB).Delete(ctx, "cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	inTeam.waitApp(t, "web", "healed", func(o observed) bool {
		_, err := kube.CoreV1().ConfigMaps(destB).Get(ctx, "cm", metav1.GetOptions{})
		return err == nil && syncedHealthy(o)
	})

	inTeam.delete(t, "web")
	inTeam.waitGone(t, "web")
	if _, err := kube.CoreV1().ConfigMaps(destB).Get(ctx, "cm", metav1.GetOptions{}); err != nil {
		t.Errorf("objects of an Application deleted without a finalizer: %v", err)
	}
	if err := kube.CoreV1().ConfigMaps(destA).Delete(ctx, "cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	inControl.waitApp(t, "web", "the control namespace's app still healed", func(o observed) bool {
		_, err := kube.CoreV1().ConfigMaps(destA).Get(ctx, "cm", metav1.GetOptions{})
		return err == nil && syncedHealthy(o)
	})
}
