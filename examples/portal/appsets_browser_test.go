package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestAppSetsBrowser is the ApplicationSets page over an operator's
// namespace: an ApplicationSet with a list generator and a RollingSync
// strategy (progressive syncs on in argocd-cmd-params-cm), run by the
// operator program, is shown to alice, reached from the list from the
// keyboard, with its generator, the two apps it generated (linked), its
// conditions and each app's rollout step as the operator wrote them in
// status.applicationStatus. bob, whose role may not get the project
// default, sees none, on the page and from the API.
func TestAppSetsBrowser(t *testing.T) {
	ns := cluster.TestNamespace(t)
	dests := []string{cluster.TestNamespace(t), cluster.TestNamespace(t)}
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "plain"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "plain", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {a: b}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	params := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cmd-params-cm", Namespace: ns},
		Data: map[string]string{"applicationsetcontroller.enable.progressive.syncs": "true"}}
	c := nsClient(t)
	if err := c.Create(ctx, params); err != nil {
		t.Fatal(err)
	}
	startOperator(t, ns)
	spec, _ := json.Marshal(map[string]any{"project": "default",
		"source":      map[string]any{"repoURL": "file://" + repo, "path": "plain"},
		"destination": map[string]any{"name": "in-cluster", "namespace": "{{dest}}"}})
	set := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "envs"}, Spec: v1alpha1.ApplicationSetSpec{
		Generators: []v1alpha1.ApplicationSetGenerator{{List: &v1alpha1.ListGenerator{Elements: []json.RawMessage{
			json.RawMessage(`{"env":"dev","dest":"` + dests[0] + `"}`), json.RawMessage(`{"env":"prod","dest":"` + dests[1] + `"}`)}}}},
		Template: v1alpha1.ApplicationSetTemplate{Metadata: v1alpha1.ApplicationSetTemplateMeta{Name: "envs-{{env}}", Labels: map[string]string{"env": "{{env}}"}},
			Spec: spec},
		Strategy: &v1alpha1.ApplicationSetStrategy{Type: "RollingSync", RollingSync: &v1alpha1.ApplicationSetRolloutStrategy{Steps: []v1alpha1.ApplicationSetRolloutStep{
			{MatchExpressions: []v1alpha1.ApplicationMatchExpression{{Key: "env", Operator: "In", Values: []string{"dev"}}}},
			{MatchExpressions: []v1alpha1.ApplicationMatchExpression{{Key: "env", Operator: "In", Values: []string{"prod"}}}}}}},
	}}
	// The operator installs the CRDs: create once they are served.
	waitFor(t, 2*time.Minute, "the ApplicationSet created", func() (bool, string) {
		err := c.Create(ctx, set.DeepCopy())
		return err == nil, errString(err)
	})
	waitFor(t, 2*time.Minute, "the set's rollout status", func() (bool, string) {
		var got v1alpha1.ApplicationSet
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "envs"}, &got); err != nil {
			return false, err.Error()
		}
		b, _ := json.Marshal(got.Status)
		return len(got.Status.ApplicationStatus) == 2, string(b)
	})
	p := startNamespacePortal(t, ns)
	defer p.stop()
	_, run := newBrowser(t, 4*time.Minute)
	login := func(token string) {
		run("login", chromedp.Navigate(p.http.URL+"/login"), chromedp.WaitVisible(chromedp.CSS("#token")),
			chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS("#login")),
			chromedp.WaitVisible(chromedp.CSS("#appsets-link")))
	}
	login(tokAdmin)
	var gens, apps, steps, conds string
	run("the sets from the list", chromedp.Navigate(p.http.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#appsets-link")),
		focusNow("#appsets-link"), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#appset-envs .appset-steps tr[data-app="envs-prod"]`)),
		into(&gens, chromedp.Text(chromedp.CSS("#appset-envs .generators"))),
		into(&apps, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#appset-envs .appset-apps a")).map((a) => a.getAttribute("href")).join(",")`)),
		into(&steps, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#appset-envs .appset-steps tbody tr")).map((r) => r.cells[0].textContent + ":" + r.dataset.app).join(",")`)),
		into(&conds, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#appset-envs .appset-conditions tbody tr")).map((r) => r.dataset.type).join(",")`)))
	shotAt(t, run, "portal-appsets.png")
	if gens != "list" {
		t.Errorf("generators %q, want list", gens)
	}
	if apps != "/apps/envs-dev,/apps/envs-prod" {
		t.Errorf("generated apps linked %q, want both", apps)
	}
	if steps != "1:envs-dev,2:envs-prod" {
		t.Errorf("rollout steps %q, want dev in step 1 and prod in step 2", steps)
	}
	if conds == "" {
		t.Error("no condition shown, though the operator wrote the set's conditions")
	}
	run("a generated app's link", chromedp.Click(chromedp.CSS(`#appset-envs .appset-apps a[href="/apps/envs-dev"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-app="envs-dev"]`)))

	login(tokReaderA)
	run("bob sees none", chromedp.Navigate(p.http.URL+"/applicationsets"), chromedp.WaitVisible(chromedp.CSS("#appsets-empty")))
	code, _, raw := p.call("GET", "/api/v1/applicationsets", tokReaderA, "", nil)
	if code != 200 || !strings.Contains(raw, `"items":[]`) {
		t.Errorf("bob's ApplicationSets: %d %s, want none", code, raw)
	}
	code, _, raw = p.call("GET", "/api/v1/applicationsets", tokAdmin, "", nil)
	if code != 200 || !strings.Contains(raw, `"name":"envs"`) {
		t.Errorf("alice's ApplicationSets: %d %s, want envs", code, raw)
	}
}
