package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestParametersBrowser drives the parameter table in headless Chromium
// for an auto-detected chart (no helm block) and an auto-detected overlay
// (no kustomize block), both in team-a. alice (admin) sees the chart's
// values, types an override of message and presses Enter: the row is
// marked overridden, the audit log has the edit, and the step after, a
// sync, puts the override in the ConfigMap. She overrides the overlay's
// image: its row shows the new image, marked. bob (readonly in team-a)
// sees the same table with disabled inputs and no Save button.
func TestParametersBrowser(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	files := map[string][]byte{}
	for p, b := range chartFiles {
		files[p] = []byte(b)
	}
	for p, b := range overlayFiles {
		files[p] = []byte(b)
	}
	if _, err := f.git.Commit(ctx, "apps", "chart and overlay", files); err != nil {
		t.Fatal(err)
	}
	for _, app := range []struct{ name, path string }{{"hello", "chart"}, {"web", "overlay"}} {
		code, _, raw := f.call("POST", "/api/v1/apps", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"name": app.name, "project": "team-a",
			"repoURL": f.repo, "path": app.path, "cluster": v1alpha1.KubernetesInternalAPIServerAddr, "namespace": f.ns})
		if code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", app.name, code, raw)
		}
	}
	// A hard refresh: the repository's branches were read before the commit.
	if code, _, raw := f.call("POST", "/api/v1/refresh", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"apps": []string{"hello", "web"}, "hard": true}); code != http.StatusAccepted {
		t.Fatalf("refresh: %d %s", code, raw)
	}
	_, run := newBrowser(t, 4*time.Minute)
	loginAs(run, f.http.URL, tokAdmin)
	row := func(name string) string { return `#parameters tr.param[data-name="` + name + `"]` }
	// openParams opens the table and fails with what it shows when it
	// lacks want.
	openParams := func(app, want string) {
		t.Helper()
		var text string
		var found int
		run(app+"'s table", chromedp.Navigate(f.http.URL+"/apps/"+app), chromedp.WaitVisible(chromedp.CSS("#parameters-open")),
			chromedp.Click(chromedp.CSS("#parameters-open")),
			chromedp.Poll[chromedp.Void](`document.querySelector("#parameters-body").textContent !== "Loading…"`),
			into(&text, chromedp.Text(chromedp.CSS("#parameters-body"))),
			into(&found, chromedp.Evaluate[int](`document.querySelectorAll('`+want+`').length`)))
		if found == 0 {
			t.Fatalf("%s's parameters lack %s: %q", app, want, text)
		}
	}
	var chartValue string
	openParams("hello", row("message")+" input")
	run("chart value", into(&chartValue, chromedp.Text(chromedp.CSS(row("message")+" td:nth-child(2)"))))
	if chartValue != "hello" {
		t.Errorf("message's chart value %q, want hello", chartValue)
	}
	run("override", chromedp.SendKeys(chromedp.CSS(row("message")+" input"), "hi from the table\r"),
		chromedp.WaitVisible(chromedp.CSS(row("message")+".overridden .s-override")),
		chromedp.Poll[chromedp.Void](`document.querySelector("#parameters-state").textContent === "Saved."`))
	shotAt(t, run, "portal-parameters.png")
	var replicasOverridden int
	run("others unmarked", into(&replicasOverridden, chromedp.Evaluate[int](`document.querySelectorAll('`+row("replicas")+`.overridden').length`)))
	if replicasOverridden != 0 {
		t.Error("replicas is marked overridden, though only message was")
	}
	if a := f.audit.String(); !strings.Contains(a, `"action":"details","app":"hello"`) || !strings.Contains(a, `"helmParameters":["message"]`) {
		t.Errorf("audit lacks the override of hello's message: %s", a)
	}
	f.syncAndWait("hello", tokAdmin)
	cm, err := f.kube.CoreV1().ConfigMaps(f.ns).Get(ctx, "hello", metav1.GetOptions{})
	if err != nil || cm.Data["message"] != "hi from the table" {
		t.Errorf("hello's ConfigMap after the sync: %v %v, want the override", cm.Data, err)
	}

	img := `#parameters tr.image[data-image="registry.k8s.io/guestbook:v3"] input`
	openParams("web", img)
	run("web's image", chromedp.SendKeys(chromedp.CSS(img), "registry.k8s.io/guestbook:v4"), chromedp.Click(chromedp.CSS("#parameters-save")),
		chromedp.WaitVisible(chromedp.CSS(`#parameters tr.image.overridden[data-image="registry.k8s.io/guestbook:v4"] .s-override`)))

	loginAs(run, f.http.URL, tokReaderA)
	var disabled bool
	var saves int
	openParams("hello", "#parameters-readonly")
	run("bob", into(&disabled, chromedp.Evaluate[bool](`document.querySelector('`+row("message")+` input').disabled`)),
		into(&saves, chromedp.Evaluate[int](`document.querySelectorAll("#parameters-save").length`)))
	if !disabled || saves != 0 {
		t.Errorf("bob's table: input disabled %v, %d Save buttons; want disabled and none", disabled, saves)
	}
}
