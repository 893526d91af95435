package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	gosync "sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// writeScreenshots replaces docs/portal-*.png with this run's screenshots.
var writeScreenshots = flag.Bool("screenshots", false, "write the browser test's screenshots to docs/")

// maxScreenshot is the size a committed screenshot may have.
const maxScreenshot = 200 << 10

// chromiumFlags are the flags the browser runs with: headless, no sandbox
// (containers), and nothing that reaches the network on its own.
func chromiumFlags(execPath, userDataDir string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(execPath),
		chromedp.UserDataDir(userDataDir),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1200, 820),
	}
}

// TestBrowser drives the portal in headless Chromium against the local
// cluster and a real Git server: log in, open the list and the app, see
// the tree, Sync and watch it turn Synced and Healthy (pushed by SSE), see
// the diff of an object changed by hand, sync a new commit, and roll back.
// It fails, never skips, when chromium is missing (make chromium installs
// it).
func TestBrowser(t *testing.T) {
	f := newFixture(t)
	_, run := newBrowser(t, 8*time.Minute)
	shot := func(name string) {
		t.Helper()
		var png []byte
		run("screenshot "+name, into(&png, chromedp.CaptureScreenshot()))
		if len(png) > maxScreenshot {
			t.Errorf("screenshot %s is %d bytes, more than %d", name, len(png), maxScreenshot)
		}
		if *writeScreenshots {
			if err := os.WriteFile(filepath.Join("..", "..", "docs", name), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	node := func(key string) string { return `li.node[data-key="` + key + `"]` }
	ns := f.ns

	// Log in with a token, land on the list.
	run("login", chromedp.Navigate(f.http.URL+"/login"), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), tokAdmin), chromedp.Click(chromedp.CSS("#login")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-app="guestbook"] .badge[data-status="OutOfSync"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-app="other"]`)))
	shot("portal-list.png")

	// Filters are server-side: project team-b leaves only "other".
	var rows int
	run("filter", chromedp.Navigate(f.http.URL+"/?project=team-b"), chromedp.WaitVisible(chromedp.CSS("#apps")),
		into(&rows, chromedp.Evaluate[int](`document.querySelectorAll("tr[data-app]").length`)))
	if rows != 1 {
		t.Errorf("project filter shows %d rows, want 1", rows)
	}

	// Open the app from the list with the keyboard-reachable link.
	run("open app", chromedp.Navigate(f.http.URL+"/"), clickNow(`a.app-link[href="/apps/guestbook"]`),
		chromedp.WaitVisible(chromedp.CSS("#tree")), chromedp.WaitVisible(chromedp.CSS(node("apps/Deployment "+ns+"/guestbook"))))

	// Sync from the dialog; the page is told by SSE, not by polling.
	start := time.Now()
	run("sync", clickNow("#sync"), chromedp.WaitVisible(chromedp.CSS("#sync-dialog")),
		clickNow("#sync-go"),
		chromedp.WaitVisible(chromedp.CSS(`#sync-status .badge[data-status="Synced"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#health-status .badge[data-status="Healthy"]`)))
	t.Logf("measure: Sync click to Synced and Healthy on the page: %s", time.Since(start).Round(10*time.Millisecond))
	var progressRows int
	run("progress rows", chromedp.WaitVisible(chromedp.CSS(`#progress-rows tr`)),
		into(&progressRows, chromedp.Evaluate[int](`document.querySelectorAll("#progress-rows tr").length`)))
	if progressRows < 4 {
		t.Errorf("progress shows %d rows, want the hook and the app's 3 objects", progressRows)
	}

	// The tree after the sync: the Deployment's ReplicaSet (from the
	// cache's owner references) and the hook apart.
	run("tree", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(node("apps/Deployment "+ns+"/guestbook")+` li.node`)),
		chromedp.WaitVisible(chromedp.CSS(`#hooks `+node("batch/Job "+ns+"/migrate"))))
	var pageWeight int
	run("page weight", into(&pageWeight, chromedp.Evaluate[int](`performance.getEntriesByType("navigation").concat(performance.getEntriesByType("resource"))
		.filter(e => !e.name.includes("/stream")).reduce((a, e) => a + e.encodedBodySize, 0)`)))
	t.Logf("measure: app page weight (HTML, script, style, API calls): %d bytes", pageWeight)
	shot("portal-tree.png")

	// Change the ConfigMap by hand: the page turns OutOfSync and the node's
	// diff shows the change, coloured.
	kctx, kcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer kcancel()
	if _, err := f.kube.CoreV1().ConfigMaps(ns).Patch(kctx, "guestbook-config", types.MergePatchType,
		[]byte(`{"data":{"message":"changed by hand"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var diff string
	run("diff", chromedp.WaitVisible(chromedp.CSS(`#sync-status .badge[data-status="OutOfSync"]`)),
		clickNow(`button.open-node[data-key="ConfigMap `+ns+`/guestbook-config"]`),
		chromedp.WaitVisible(chromedp.CSS(`#view-diff span.add`)), chromedp.WaitVisible(chromedp.CSS(`#view-diff span.del`)),
		textNow("#view-diff", &diff), chromedp.ScrollIntoView(chromedp.CSS("#panel")))
	if !strings.Contains(diff, "changed by hand") || !strings.Contains(diff, "hello v1") {
		t.Errorf("diff lacks the change:\n%s", diff)
	}
	shot("portal-diff.png")

	// A new commit; a hard refresh sees it, Sync deploys it.
	files := fstest.MapFS{}
	changes := map[string][]byte{}
	for p, b := range guestbookFiles("hello v2") {
		files[p] = &fstest.MapFile{Data: b}
		changes[p] = b
	}
	second, err := f.git.Commit(kctx, "apps", "v2", changes)
	if err != nil {
		t.Fatal(err)
	}
	run("sync v2", clickNow("#hard-refresh"),
		chromedp.WaitVisible(chromedp.CSS(`#revision[title="`+second+`"]`)),
		clickNow("#sync"), chromedp.WaitVisible(chromedp.CSS("#sync-dialog")),
		clickNow("#sync-go"),
		chromedp.WaitVisible(chromedp.CSS(`#operation .badge[data-status="Succeeded"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#sync-status .badge[data-status="Synced"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#health-status .badge[data-status="Healthy"]`)))
	f.waitConfigMap("hello v2")

	// Roll back to history entry 1 from the history table.
	run("rollback", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`button.rollback[data-id="1"]`)),
		clickNow(`button.rollback[data-id="1"]`), chromedp.WaitVisible(chromedp.CSS("#rollback-dialog")),
		clickNow("#rollback-go"),
		chromedp.WaitVisible(chromedp.CSS(`#operation .badge[data-status="Succeeded"]`)))
	f.waitConfigMap("hello v1")
	// As in Argo CD, the rolled-back app is OutOfSync with its branch.
	run("after rollback", chromedp.WaitVisible(chromedp.CSS(`#sync-status .badge[data-status="OutOfSync"]`)))
	if a := f.audit.String(); !strings.Contains(a, `"action":"rollback"`) || !strings.Contains(a, `"user":"alice"`) {
		t.Errorf("audit log lacks the rollback: %s", a)
	}
}

// newBrowser starts headless Chromium for one test and returns its context
// and a runner that fails the test with the page's text. It fails, never
// skips, when chromium is missing (make chromium installs it).
func newBrowser(t *testing.T, timeout time.Duration) (context.Context, func(string, ...chromedp.Action[chromedp.Void])) {
	t.Helper()
	chrome, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (run `make chromium`, or apt-get install chromium): %v", err)
	}
	out := &tailBuffer{max: 16 << 10}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), append(chromiumFlags(chrome, t.TempDir()), chromedp.CombinedOutput(out))...)
	t.Cleanup(cancelA)
	tab, cancelB := chromedp.NewContext(actx)
	t.Cleanup(cancelB)
	// The browser starts with the context of the first Run and lives as
	// long as it: start it with the tab's, so that a step that runs out of
	// the test's time leaves a browser to read the page from.
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	ctx, cancel := context.WithTimeout(tab, timeout)
	t.Cleanup(cancel)
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		for i, a := range actions {
			if err := chromedp.Do(ctx, a); err != nil {
				// The page as it is, read with a time of its own: the
				// test's context may be what ran out.
				pctx, cancel := context.WithTimeout(tab, 10*time.Second)
				defer cancel()
				var url, body string
				perr := chromedp.Do(pctx, into(&url, chromedp.Location()), into(&body, chromedp.Text(chromedp.CSS("body"))))
				if perr != nil {
					// The page does not answer: say whether the browser
					// does (a new tab), what it printed, and where this
					// side of the connection waits.
					nctx, ncancel := chromedp.NewContext(tab)
					nctx, ncancel2 := context.WithTimeout(nctx, 10*time.Second)
					_, berr := chromedp.Run(nctx, chromedp.Evaluate[int]("1+1"))
					ncancel2()
					ncancel()
					t.Fatalf("%s (step %d of %d): %v\nthe page does not answer (%v); a new tab: %v\nchromium printed:\n%s\nchromedp's goroutines:\n%s",
						what, i+1, len(actions), err, perr, berr, out.String(), chromedpStacks())
				}
				t.Fatalf("%s (step %d of %d): %v\npage %s text:\n%s", what, i+1, len(actions), err, url, body)
			}
		}
	}
	return ctx, run
}

// loginAs logs the browser in with token and waits for the list.
func loginAs(run func(string, ...chromedp.Action[chromedp.Void]), base, token string) {
	run("login", chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS("#login")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-app="guestbook"]`)))
}

// waitConfigMap waits until the app's ConfigMap holds message.
func (f *fixture) waitConfigMap(message string) {
	f.t.Helper()
	waitFor(f.t, 60*time.Second, "ConfigMap message "+message, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cm, err := f.kube.CoreV1().ConfigMaps(f.ns).Get(ctx, "guestbook-config", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cm.Data["message"] == message, fmt.Sprint(cm.Data)
	})
}

// into runs a and keeps its value in *dst, so that value steps join the
// others in one run.
func into[T any](dst *T, a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		v, err := a(ctx, t)
		*dst = v
		return err
	})
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  gosync.Mutex
	max int
	b   []byte
}

func (w *tailBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > w.max {
		w.b = append(w.b[:0], w.b[len(w.b)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}

// chromedpStacks is the stacks of this process's goroutines in chromedp.
func chromedpStacks() string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "chromedp") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
