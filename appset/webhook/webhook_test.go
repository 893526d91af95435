package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/appset/webhook"
	srcwebhook "github.com/kubegitops/gitops/source/webhook"
)

const previews = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: previews, namespace: argocd}
spec:
  generators:
  - matrix:
      generators:
      - pullRequest:
          github: {owner: MyOrg, repo: svc-a}
      - list: {elements: [{env: preview}]}
  - pullRequest:
      gitlab: {project: "42", api: https://gitlab.example.com/}
  - pullRequest:
      azuredevops: {organization: o, project: proj, repo: svc-a}
  template:
    metadata: {name: 'p-{{number}}'}
    spec: {}
`

func post(t *testing.T, h http.Handler, headers map[string]string, body string) int {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/webhook", strings.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

func sign(secret, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// TestPullRequestWebhook: a signed GitHub pull_request event (opened)
// refreshes the set whose pullRequest generator (inside a matrix) lists
// that repository; a GitLab merge request event matches by target project
// and host; an Azure DevOps service hook by project and repository, with
// its basic auth; a bad signature, a wrong password and an action that
// does not change the list refresh nothing.
func TestPullRequestWebhook(t *testing.T) {
	sets, err := appset.Load(strings.NewReader(previews))
	if err != nil {
		t.Fatal(err)
	}
	set := sets[0]
	var mu sync.Mutex
	var got []*webhook.PullRequestEvent
	h := webhook.NewHandler(webhook.Options{
		Secrets:             srcwebhook.Secrets{srcwebhook.GitHub: {"gh-secret"}, srcwebhook.GitLab: {"gl-token"}},
		AzureDevOpsUsername: "argo", AzureDevOpsPassword: "az-pass",
		OnPullRequest: func(_ context.Context, ev *webhook.PullRequestEvent) {
			mu.Lock()
			got = append(got, ev)
			mu.Unlock()
		},
	})
	gh := `{"action":"opened","number":7,"repository":{"name":"svc-a","owner":{"login":"myorg"},"url":"https://api.github.com/repos/myorg/svc-a"}}`
	if c := post(t, h, map[string]string{"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": sign("gh-secret", gh)}, gh); c != http.StatusOK {
		t.Fatalf("github: HTTP %d", c)
	}
	if c := post(t, h, map[string]string{"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": sign("wrong", gh)}, gh); c != http.StatusUnauthorized {
		t.Fatalf("github with a bad signature: HTTP %d", c)
	}
	edited := strings.Replace(gh, `"opened"`, `"edited"`, 1)
	post(t, h, map[string]string{"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": sign("gh-secret", edited)}, edited)
	gl := `{"object_kind":"merge_request","project":{"id":42,"path_with_namespace":"g/p","web_url":"https://gitlab.example.com/g/p"},"object_attributes":{"action":"merge","target_project_id":42}}`
	if c := post(t, h, map[string]string{"X-Gitlab-Event": "Merge Request Hook", "X-Gitlab-Token": "gl-token"}, gl); c != http.StatusOK {
		t.Fatalf("gitlab: HTTP %d", c)
	}
	az := `{"eventType":"git.pullrequest.created","resource":{"repository":{"name":"svc-a","project":{"name":"proj"}}}}`
	azReq := func(pw string) int {
		req := httptest.NewRequest(http.MethodPost, "/api/webhook", strings.NewReader(az))
		req.Header.Set("X-Vss-Activityid", "1")
		req.SetBasicAuth("argo", pw)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if c := azReq("nope"); c != http.StatusUnauthorized {
		t.Fatalf("azure with a wrong password: HTTP %d", c)
	}
	if c := azReq("az-pass"); c != http.StatusOK {
		t.Fatalf("azure: HTTP %d", c)
	}
	if len(got) != 3 {
		t.Fatalf("events = %d, want 3 (github, gitlab, azure)", len(got))
	}
	for _, ev := range got {
		if !ev.Refreshes(set.Spec.Generators) {
			t.Errorf("%+v does not refresh the set", ev)
		}
	}
	other := *got[0]
	other.Repo = "svc-b"
	if other.Refreshes(set.Spec.Generators) {
		t.Error("an event of another repository refreshes the set")
	}
	ghe := *got[0]
	ghe.Host = "ghe.example.com"
	if ghe.Refreshes(set.Spec.Generators) {
		t.Error("an event of another GitHub host refreshes the set")
	}
}
