package main

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/kubegitops/gitops/testenv"
)

// TestPodLogsToolsBrowser drives the Logs tab's tools in headless
// Chromium on the local cluster, from the keyboard: "/" focuses the
// search, which marks the matching text (in lines that follow too) and,
// with "Matching lines only", hides the rest; Timestamps restarts the
// stream with each line's time; Download saves the whole log as a file
// with the timestamps asked for. bob, without "logs, get", is refused the
// download by name.
func TestPodLogsToolsBrowser(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{RBACConfigMap: fixtureRBAC, Projects: fixtureRBACProjects})
	f.syncAndWait("guestbook", tokAdmin)
	pod := f.guestbookPod()
	current, _ := cluster.PodLogFiles()
	alpha, beta, later := "tools-alpha-"+f.ns, "tools-beta-"+f.ns, "tools-beta-later-"+f.ns
	if err := testenv.AppendPodLog(current, alpha, beta); err != nil {
		t.Fatal(err)
	}
	dep := "apps/Deployment " + f.ns + "/guestbook"
	has := func(js string) chromedp.Action[chromedp.Void] { return chromedp.Poll[chromedp.Void](js) }
	lineText := `Array.from(document.querySelectorAll("#log-lines .log-line")).filter((l) => !l.hidden).map((l) => l.textContent).join("")`
	marks := `Array.from(document.querySelectorAll("#log-lines mark")).map((m) => m.textContent)`

	ctx, run := newBrowser(t, 4*time.Minute)
	loginAs(run, f.http.URL, tokAdmin)
	run("logs tab", chromedp.Navigate(f.http.URL+"/apps/guestbook"),
		clickNow(`button.open-node[data-key="`+dep+`"]`),
		chromedp.WaitVisible(chromedp.CSS("#tab-logs")), clickNow("#tab-logs"),
		has(lineText+`.includes("`+beta+`")`))

	// "/" focuses the search; typing marks the matches.
	run("search", focusNow("#log-lines"), chromedp.KeyEvent("/"),
		has(`document.activeElement.id === "log-search" && document.activeElement.value === ""`),
		chromedp.KeyEvent("tools-beta"),
		has(`document.querySelector("#log-search").value === "tools-beta"`),
		has(marks+`.length === 1 && `+marks+`[0] === "tools-beta"`),
		has(`document.querySelector("#log-search-count").textContent === "1 matching line"`),
		has(lineText+`.includes("`+alpha+`")`))
	// A line that follows is marked as it arrives.
	if err := testenv.AppendPodLog(current, later); err != nil {
		t.Fatal(err)
	}
	run("followed line marked", has(marks+`.length === 2`))
	// Matching lines only: the alpha line hides, the beta lines stay.
	run("matching only", clickNow("#log-matching"),
		has(`!(`+lineText+`).includes("`+alpha+`") && (`+lineText+`).includes("`+later+`")`),
		focusNow("#log-search"), chromedp.KeyEvent(kb.Escape),
		has(lineText+`.includes("`+alpha+`") && document.querySelectorAll("#log-lines mark").length === 0`))

	// Timestamps: the stream starts again, each line led by its time.
	run("timestamps", clickNow("#log-timestamps"),
		has(`/^\d{4}-\d\d-\d\dT[\d:.]+Z tools-alpha-/m.test(`+lineText+`)`))
	if *writeScreenshots {
		var png []byte
		run("screenshot", focusNow("#log-search"), chromedp.KeyEvent("beta"),
			chromedp.ScrollIntoView(chromedp.CSS("#panel")), into(&png, chromedp.CaptureScreenshot()))
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "portal-logs-search.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Download, from the keyboard: the whole log, with timestamps.
	dir := t.TempDir()
	progress := chromedp.Events(ctx, browser.DownloadProgress)
	run("download", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: ptrTo(true)})
		return err
	}), focusNow("#log-download"), chromedp.KeyEvent(kb.Enter))
	var file string
	for ev, err := range progress {
		if err != nil {
			t.Fatalf("download: %v", err)
		}
		if ev.State == browser.DownloadProgressStateCanceled {
			t.Fatal("the download was cancelled")
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			file = filepath.Join(dir, ev.GUID)
			break
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{alpha, beta, later} {
		if !regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\S+Z ` + want + `$`).Match(b) {
			t.Errorf("downloaded log lacks the timestamped line %q:\n%s", want, b)
		}
	}

	// The file's name, and bob's refusal.
	q := url.Values{"key": {pod}, "container": {"web"}, "download": {"true"}}
	for tok, want := range map[string]int{tokAdmin: http.StatusOK, tokReaderA: http.StatusForbidden} {
		req, _ := http.NewRequest("GET", f.http.URL+"/api/v1/apps/guestbook/logs?"+q.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := f.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := make([]byte, 512)
		n, _ := resp.Body.Read(body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("download as %s: %d %s, want %d", tok, resp.StatusCode, body[:n], want)
		}
		if want == http.StatusOK {
			if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename=`+pod[strings.LastIndex(pod, "/")+1:]+`-web.log` {
				t.Errorf("Content-Disposition %q", cd)
			}
		} else if !strings.Contains(string(body[:n]), "logs, get") {
			t.Errorf("bob's refusal does not name logs, get: %s", body[:n])
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
