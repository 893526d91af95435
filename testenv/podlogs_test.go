//go:build unix

package testenv

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodLogsThroughAPIServer reads a kwok Pod's logs the way kubectl
// does (pods/log through the API server to kwok's kubelet endpoint): the
// current file, the previous one, and a follow that sees a line appended
// after it started.
func TestPodLogsThroughAPIServer(t *testing.T) {
	cs, ns := clientset(t), cluster.TestNamespace(t)
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "talker"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 2*time.Minute, "the Pod to run", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "talker", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	current, previous := cluster.PodLogFiles()
	if err := AppendPodLog(current, "current-"+ns); err != nil {
		t.Fatal(err)
	}
	if err := AppendPodLog(previous, "previous-"+ns); err != nil {
		t.Fatal(err)
	}
	read := func(opts *corev1.PodLogOptions) string {
		t.Helper()
		b, err := cs.CoreV1().Pods(ns).GetLogs("talker", opts).DoRaw(ctx)
		if err != nil {
			t.Fatalf("logs %+v: %v", opts, err)
		}
		return string(b)
	}
	if got := read(&corev1.PodLogOptions{Container: "main"}); !strings.Contains(got, "current-"+ns+"\n") || strings.Contains(got, "stdout F") {
		t.Fatalf("current logs: %q, want the line %q without the runtime's prefix", got, "current-"+ns)
	}
	if got := read(&corev1.PodLogOptions{Container: "main", Previous: true}); !strings.Contains(got, "previous-"+ns) || strings.Contains(got, "current-"+ns) {
		t.Fatalf("previous logs: %q, want %q only", got, "previous-"+ns)
	}

	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	rc, err := cs.CoreV1().Pods(ns).GetLogs("talker", &corev1.PodLogOptions{Container: "main", Follow: true}).Stream(fctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	lines := bufio.NewScanner(rc)
	later := "later-" + ns
	appended := false
	for lines.Scan() {
		if lines.Text() == "current-"+ns && !appended {
			appended = true
			if err := AppendPodLog(current, later); err != nil {
				t.Fatal(err)
			}
		}
		if lines.Text() == later {
			return
		}
	}
	if err := lines.Err(); err != nil && err != io.EOF {
		t.Fatalf("follow: %v (appended: %v)", err, appended)
	}
	t.Fatalf("follow ended without the line appended after it began (appended: %v)", appended)
}
