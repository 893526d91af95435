package cache

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The API server is killed and started again under a running cache: the
// watches resume (or relist) by themselves, with no new cache.
func TestAPIServerRestartRecovers(t *testing.T) {
	cs, _ := clients(t, cluster.Config())
	ns := cluster.TestNamespace(t)
	c := startCache(t, cluster.Config(), nil)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(testCtx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "before cached", func() bool { _, ok := c.Get(cmKey(ns, "before")); return ok })

	if err := cluster.RestartAPIServer(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(testCtx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps(ns).Delete(testCtx(t), "before", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "changes after the restart seen", func() bool {
		_, after := c.Get(cmKey(ns, "after"))
		_, before := c.Get(cmKey(ns, "before"))
		return after && !before
	})
	waitFor(t, 60*time.Second, "taints cleared", func() bool { return len(c.Tainted()) == 0 })
}
