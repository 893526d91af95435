package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// execRBAC is fixtureRBAC with "exec, create" for role:deployer (alice).
var execRBAC = strings.Replace(fixtureRBAC, "    p, role:deployer, logs, get, */*, allow\n",
	"    p, role:deployer, logs, get, */*, allow\n    p, role:deployer, exec, create, */*, allow\n", 1)

// dialExec opens the terminal WebSocket of guestbook's Pod as token and
// returns the connection, or the refusal's status and body.
func (f *fixture) dialExec(token, pod string) (*websocket.Conn, int, string) {
	f.t.Helper()
	u := "ws" + strings.TrimPrefix(f.http.URL, "http") + "/api/v1/apps/guestbook/exec?" + url.Values{"key": {pod}}.Encode()
	h := http.Header{"Authorization": {"Bearer " + token}}
	d := websocket.Dialer{HandshakeTimeout: 30 * time.Second}
	conn, resp, err := d.Dial(u, h)
	if err == nil {
		return conn, http.StatusSwitchingProtocols, ""
	}
	if resp == nil {
		f.t.Fatalf("exec: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return nil, resp.StatusCode, string(b)
}

// TestPodTerminalBrowser opens the Pod terminal on the local cluster, as
// Argo CD guards it: off without argocd-cm's exec.enabled (403 naming the
// key, no Terminal tab), then, once exec.enabled is "true" in the live
// argocd-cm, alice (exec, create) gets a Terminal tab on the Pod whose
// shell (kwok runs it on this machine through the API server's
// pods/exec) answers what she types from the keyboard; bob, without exec,
// create, is refused by name. Each opening and refusal is audited.
func TestPodTerminalBrowser(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{RBACConfigMap: execRBAC, RBACNamespace: true, Projects: fixtureRBACProjects})
	f.syncAndWait("guestbook", tokAdmin)
	pod := f.guestbookPod()

	// Off by default.
	if _, code, body := f.dialExec(tokAdmin, pod); code != http.StatusForbidden || !strings.Contains(body, "exec.enabled") {
		t.Errorf("exec with the terminal off: %d %s, want 403 naming exec.enabled", code, body)
	}
	if _, perms, _ := f.call("GET", "/api/v1/apps/guestbook/permissions", tokAdmin, "", nil); perms["exec"] != false {
		t.Errorf("alice's permissions with the terminal off: %v, want exec false", perms)
	}
	_, run := newBrowser(t, 4*time.Minute)
	loginAs(run, f.http.URL, tokAdmin)
	var tabs int
	run("no terminal tab", chromedp.Navigate(f.http.URL+"/apps/guestbook"),
		clickNow(`button.open-node[data-key="`+pod+`"]`), chromedp.WaitVisible(chromedp.CSS("#tab-live")),
		into(&tabs, chromedp.Evaluate[int](`document.querySelectorAll("#tab-terminal, #view-terminal").length`)))
	if tabs != 0 {
		t.Errorf("with exec.enabled unset the page has %d terminal elements, want none", tabs)
	}

	// On: argocd-cm's exec.enabled, read live.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := f.kube.CoreV1().ConfigMaps(f.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm"},
		Data: map[string]string{"exec.enabled": "true", "exec.shells": "no-such-shell,bash"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "exec enabled for alice", func() (bool, string) {
		_, perms, raw := f.call("GET", "/api/v1/apps/guestbook/permissions", tokAdmin, "", nil)
		return perms["exec"] == true, raw
	})
	if _, code, body := f.dialExec(tokReaderA, pod); code != http.StatusForbidden || !strings.Contains(body, "exec, create") {
		t.Errorf("bob's exec: %d %s, want 403 naming exec, create", code, body)
	}

	want := "hello-42"
	run("terminal", chromedp.Reload(), clickNow(`button.open-node[data-key="`+pod+`"]`),
		chromedp.WaitVisible(chromedp.CSS("#tab-terminal")), clickNow("#tab-terminal"),
		chromedp.Poll[chromedp.Void](`document.querySelector("#term-state").textContent.includes("(bash)") && document.activeElement.id === "term-screen"`),
		chromedp.KeyEvent("echo hello-$((6*7))"), chromedp.KeyEvent(kb.Enter),
		chromedp.Poll[chromedp.Void](`document.querySelector("#term-screen").textContent.split("\n").some((l) => l.trim() === "`+want+`")`))
	if *writeScreenshots {
		var png []byte
		run("screenshot", chromedp.ScrollIntoView(chromedp.CSS("#panel")), into(&png, chromedp.CaptureScreenshot()))
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "portal-terminal.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// exit ends the session, and the page says so.
	run("exit", focusNow("#term-screen"), chromedp.KeyEvent("exit"), chromedp.KeyEvent(kb.Enter),
		chromedp.Poll[chromedp.Void](`document.querySelector("#term-state").textContent.includes("bash exited")`))

	waitFor(t, 30*time.Second, "the audited terminal session", func() (bool, string) {
		a := f.audit.String()
		return strings.Contains(a, `"action":"exec"`) && strings.Contains(a, `"outcome":"opened"`) &&
			strings.Contains(a, `"outcome":"ended: bash exited"`) && strings.Contains(a, `"outcome":"refused: application guestbook`), a
	})
}
