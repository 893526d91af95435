package appsets_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	appsetwebhook "github.com/kubegitops/gitops/appset/webhook"
	"github.com/kubegitops/gitops/internal/forgetest"
	srcwebhook "github.com/kubegitops/gitops/source/webhook"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// TestForgeGeneratorsThroughTheOperator: on the local cluster, an
// scmProvider set over a GitHub organisation of three repositories (one
// filtered out) writes two Applications, and a pullRequest set one per
// open pull request; when a pull request closes, the forge's signed
// pull_request webhook refreshes the set at once (its requeueAfterSeconds
// is an hour) and the preview's Application is deleted. The token comes
// from a Secret of the set's namespace.
func TestForgeGeneratorsThroughTheOperator(t *testing.T) {
	e := start(t, nil)
	ctx := context.Background()
	f := forgetest.New()
	f.Token = "ghp_operator-token"
	for _, r := range []forgetest.Repo{
		{Org: "myorg", Name: "svc-a", DefaultBranch: "main", Branches: map[string]string{"main": "aaaa1111"}},
		{Org: "myorg", Name: "svc-b", DefaultBranch: "main", Branches: map[string]string{"main": "bbbb2222"}},
		{Org: "myorg", Name: "docs", DefaultBranch: "main", Branches: map[string]string{"main": "dddd4444"}},
	} {
		f.AddRepo(r)
	}
	f.OpenPR(forgetest.PR{Org: "myorg", Repo: "svc-a", Number: 7, Title: "feat: a", Branch: "feat-a", Target: "main", SHA: "7777777777", Author: "ann"})
	f.OpenPR(forgetest.PR{Org: "myorg", Repo: "svc-a", Number: 8, Title: "feat: b", Branch: "feat-b", Target: "main", SHA: "8888888888", Author: "bob"})
	api := f.GitHub(t)
	// The Applications read a repository of the local Git server: nothing
	// leaves the machine.
	deploy := e.repo(t, "deploy", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"})
	if err := e.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "github-token"}, StringData: map[string]string{"token": f.Token}}); err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{fmt.Sprintf(`
metadata: {name: repos}
spec:
  generators:
  - scmProvider:
      cloneProtocol: https
      github: {organization: myorg, api: '%[1]s/', tokenRef: {secretName: github-token, key: token}}
      filters: [{repositoryMatch: ^svc}]
  template:
    metadata: {name: 'repo-{{repository}}', annotations: {clone-url: '{{url}}', sha: '{{sha}}'}}
    spec: {project: default, source: {repoURL: '%[2]s', path: app}, destination: {server: https://kubernetes.default.svc, namespace: '{{repository}}'}}
`, api, deploy), fmt.Sprintf(`
metadata: {name: previews}
spec:
  generators:
  - pullRequest:
      github: {owner: myorg, repo: svc-a, api: '%[1]s/', tokenRef: {secretName: github-token, key: token}}
      requeueAfterSeconds: 3600
  template:
    metadata: {name: 'preview-{{number}}', annotations: {sha: '{{head_sha}}'}}
    spec: {project: default, source: {repoURL: '%[2]s', path: app}, destination: {server: https://kubernetes.default.svc, namespace: 'pr-{{number}}'}}
`, api, deploy)} {
		set := &v1alpha1.ApplicationSet{}
		if err := yaml.UnmarshalStrict([]byte(doc), set); err != nil {
			t.Fatal(err)
		}
		set.Namespace = e.ns
		if err := e.c.Create(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	names := func(ctx context.Context) []string {
		var al v1alpha1.ApplicationList
		if err := e.c.List(ctx, &al, client.InNamespace(e.ns)); err != nil {
			return nil
		}
		var out []string
		for _, a := range al.Items {
			if a.DeletionTimestamp == nil {
				out = append(out, a.Name)
			}
		}
		slices.Sort(out)
		return out
	}
	waitFor := func(want string) {
		t.Helper()
		var got []string
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			got = names(ctx)
			return strings.Join(got, ",") == want, nil
		})
		if err != nil {
			t.Fatalf("Applications = %v, want %s", got, want)
		}
	}
	waitFor("preview-7,preview-8,repo-svc-a,repo-svc-b")

	hook := appsetwebhook.NewHandler(appsetwebhook.Options{
		Secrets: srcwebhook.Secrets{srcwebhook.GitHub: {"hook-secret"}},
		OnPullRequest: func(ctx context.Context, ev *appsetwebhook.PullRequestEvent) {
			if _, err := e.sets.RefreshPullRequest(ctx, ev); err != nil {
				t.Errorf("refresh: %v", err)
			}
		},
	})
	f.ClosePR("myorg", "svc-a", 7)
	body := fmt.Sprintf(`{"action":"closed","number":7,"repository":{"name":"svc-a","owner":{"login":"myorg"},"url":"%s/api/v3/repos/myorg/svc-a"}}`, api)
	m := hmac.New(sha256.New, []byte("hook-secret"))
	m.Write([]byte(body))
	req := httptest.NewRequest(http.MethodPost, "/api/webhook", strings.NewReader(body))
	req.Header.Set("X-GitHub-Event", "pull_request")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
	rec := httptest.NewRecorder()
	hook.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("webhook: HTTP %d %s", rec.Code, rec.Body)
	}
	waitFor("preview-8,repo-svc-a,repo-svc-b")
	if strings.Contains(strings.Join(f.Requests(), " "), f.Token) {
		t.Fatal("the token reached a URL")
	}
}
