//go:build unix

package testenv

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Not parallel: it takes kwok away from the other tests for a moment.
// kwok v0.8.0 can crash on a data race in its CEL library; the cluster
// starts it again, and Pods keep coming up.
func TestKwokCrashIsSurvived(t *testing.T) {
	var kwok *process
	for _, p := range cluster.others {
		if p.name == "kwok" {
			kwok = p
		}
	}
	if kwok == nil {
		t.Fatal("no kwok process in the cluster")
	}
	old := kwok.pid()
	if err := syscall.Kill(-old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, time.Minute, "kwok to run again", func(context.Context) (bool, error) {
		return kwok.running() && kwok.pid() != old, nil
	})
	log, err := os.ReadFile(kwok.logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "testenv: kwok exited") {
		t.Fatalf("kwok's log does not say it was started again:\n%s", log[max(0, len(log)-2000):])
	}

	cs, ns := clientset(t), cluster.TestNamespace(t)
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "after-crash"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 2*time.Minute, "the Pod to run after kwok's restart", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "after-crash", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return p.Status.Phase == corev1.PodRunning, nil
	})
}
