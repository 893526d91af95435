package github_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/appset/scm"
	"github.com/kubegitops/gitops/appset/scm/github"
	"github.com/kubegitops/gitops/internal/forgetest"
)

const token = "ghp_s3cr3t-token"

// forge is an organisation of three repositories, two of them services
// with a deploy folder, and two open pull requests on svc-a.
func forge(t *testing.T) (*forgetest.Forge, string) {
	f := forgetest.New()
	f.Token = token
	f.AddRepo(forgetest.Repo{Org: "myorg", Name: "svc-a", DefaultBranch: "main", Branches: map[string]string{"main": "aaaa1111bbbb2222", "feature": "ffff0000"}, Topics: []string{"deploy-ok"}, Files: []string{"deploy/kustomization.yaml"}})
	f.AddRepo(forgetest.Repo{Org: "myorg", Name: "svc-b", DefaultBranch: "trunk", Branches: map[string]string{"trunk": "bbbb2222cccc3333"}, Files: []string{"deploy/app.yaml"}})
	f.AddRepo(forgetest.Repo{Org: "myorg", Name: "docs", DefaultBranch: "main", Branches: map[string]string{"main": "dddd4444"}})
	f.OpenPR(forgetest.PR{Org: "myorg", Repo: "svc-a", Number: 7, Title: "feat: login", Branch: "feature/Login_Page", Target: "main", SHA: "0123456789abcdef", Author: "ann", Labels: []string{"preview"}})
	f.OpenPR(forgetest.PR{Org: "myorg", Repo: "svc-a", Number: 8, Title: "fix: typo", Branch: "typo", Target: "main", SHA: "fedcba9876543210", Author: "bob", Labels: []string{"preview"}})
	f.OpenPR(forgetest.PR{Org: "myorg", Repo: "svc-a", Number: 9, Title: "chore", Branch: "chore", Target: "main", SHA: "1111", Author: "cy"})
	return f, f.GitHub(t)
}

func objects(extra ...*corev1.Secret) appset.StaticObjects {
	o := appset.StaticObjects{Secrets: map[string]*corev1.Secret{
		"argocd/github-token": {ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{scm.SecretTypeLabel: scm.SecretTypeSCMCreds}}, Data: map[string][]byte{"token": []byte(token)}},
	}}
	for _, s := range extra {
		o.Secrets[s.Namespace+"/"+s.Name] = s
	}
	return o
}

func options(objs appset.Objects) appset.Options {
	p := github.New(scm.Options{Objects: objs})
	o := appset.DefaultOptions()
	o.SCMProviders = map[string]appset.SCMProvider{github.Key: p}
	o.PullRequestProviders = map[string]appset.PullRequestProvider{github.Key: p}
	return o
}

func load(t *testing.T, doc string) *appset.ApplicationSet {
	t.Helper()
	sets, err := appset.Load(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return &sets[0]
}

func names(res appset.Result) string {
	var out []string
	for _, a := range res.Applications {
		out = append(out, a.GetName())
	}
	return strings.Join(out, ",")
}

func scmSet(api, extra string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: repos, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - scmProvider:
      cloneProtocol: https
      github:
        organization: myorg
        api: %s/
        tokenRef: {secretName: github-token, key: token}
%s      filters:
      - repositoryMatch: ^svc
        pathsExist: [deploy]
  template:
    metadata: {name: '{{.repository}}-{{.branchNormalized}}', annotations: {url: '{{.url}}', sha: '{{.short_sha_7}}', labels: '{{.labels}}', id: '{{.repository_id}}'}}
    spec: {project: default, source: {repoURL: '{{.url}}', targetRevision: '{{.sha}}', path: deploy}, destination: {server: https://kubernetes.default.svc, namespace: '{{.repository}}'}}
`, api, extra)
}

// TestSCMProviderGitHub: an organisation of three repositories on GitHub
// Enterprise, listed over two pages, one filtered out, makes two
// Applications whose url is the https clone URL and sha the default
// branch's head; allBranches makes one per branch.
func TestSCMProviderGitHub(t *testing.T) {
	f, api := forge(t)
	res, err := appset.Generate(context.Background(), load(t, scmSet(api, "")), options(objects()))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res); got != "svc-a-main,svc-b-trunk" {
		t.Fatalf("apps = %s, want svc-a-main,svc-b-trunk", got)
	}
	a := res.Applications[0].GetAnnotations()
	if a["url"] != "https://github.test/myorg/svc-a.git" || a["sha"] != "aaaa111" || a["labels"] != "deploy-ok" || a["id"] != "1000" {
		t.Errorf("svc-a parameters = %v", a)
	}
	if !slices.ContainsFunc(f.Requests(), func(r string) bool { return strings.Contains(r, "/orgs/myorg/repos") && strings.Contains(r, "page=2") }) {
		t.Errorf("the second page of repositories was not read: %v", f.Requests())
	}

	res, err = appset.Generate(context.Background(), load(t, scmSet(api, "        allBranches: true\n")), options(objects()))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res); got != "svc-a-feature,svc-a-main,svc-b-trunk" {
		t.Fatalf("allBranches apps = %s", got)
	}
}

const prSet = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: previews, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - pullRequest:
      github:
        owner: myorg
        repo: svc-a
        api: %s
        tokenRef: {secretName: github-token, key: token}
        labels: [preview]
      filters:
      - titleMatch: '^(feat|fix):'
      requeueAfterSeconds: 60
  template:
    metadata: {name: 'preview-{{.number}}', annotations: {branch: '{{.branch_slug}}', sha: '{{.head_short_sha}}', author: '{{.author}}'}}
    spec: {project: default, source: {repoURL: https://github.test/myorg/svc-a.git, targetRevision: '{{.head_sha}}', path: deploy}, destination: {server: https://kubernetes.default.svc, namespace: 'pr-{{.number}}'}}
`

// TestPullRequestGitHub: one Application per open pull request carrying
// the labels and passing the filter; closing a pull request removes its
// Application at the next generation.
func TestPullRequestGitHub(t *testing.T) {
	f, api := forge(t)
	set := load(t, fmt.Sprintf(prSet, api))
	r := appset.NewRunner(options(objects()))
	res, err := r.Generate(context.Background(), set)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res); got != "preview-7,preview-8" {
		t.Fatalf("apps = %s", got)
	}
	if a := res.Applications[0].GetAnnotations(); a["branch"] != "feature-login-page" || a["sha"] != "01234567" || a["author"] != "ann" {
		t.Errorf("preview-7 parameters = %v", a)
	}
	f.ClosePR("myorg", "svc-a", 7)
	if res, err = r.Generate(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	if got := names(res); got != "preview-8" {
		t.Fatalf("after closing #7: apps = %s", got)
	}
}

// TestPullRequestGitHubRepoNotFound: a repository the forge does not
// know fails the generator, unless continueOnRepoNotFoundError.
func TestPullRequestGitHubRepoNotFound(t *testing.T) {
	_, api := forge(t)
	doc := strings.Replace(fmt.Sprintf(prSet, api), "repo: svc-a", "repo: gone", 1)
	_, err := appset.Generate(context.Background(), load(t, doc), options(objects()))
	if !errors.Is(err, appset.ErrRepositoryNotFound) {
		t.Fatalf("err = %v, want ErrRepositoryNotFound", err)
	}
	doc = strings.Replace(doc, "      requeueAfterSeconds: 60", "      requeueAfterSeconds: 60\n      continueOnRepoNotFoundError: true", 1)
	res, err := appset.Generate(context.Background(), load(t, doc), options(objects()))
	if err != nil || len(res.Applications) != 0 {
		t.Fatalf("continueOnRepoNotFoundError: %v, %s", err, names(res))
	}
}

// TestGitHubRateLimits: a spent quota whose reset is due is waited out
// and the request asked again; a limit longer than the provider waits
// fails the generator with a *scm.RateLimitError, and the set keeps its
// last good Applications.
func TestGitHubRateLimits(t *testing.T) {
	f, api := forge(t)
	set := load(t, scmSet(api, ""))
	r := appset.NewRunner(options(objects()))
	f.LimitNext(forgetest.Limit{Status: http.StatusForbidden, Headers: map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1"}},
		forgetest.Limit{Status: http.StatusTooManyRequests, Headers: map[string]string{"Retry-After": "0"}})
	res, err := r.Generate(context.Background(), set)
	if err != nil || names(res) != "svc-a-main,svc-b-trunk" {
		t.Fatalf("after two short limits: %v, %s", err, names(res))
	}
	f.LimitNext(forgetest.Limit{Status: http.StatusTooManyRequests, Headers: map[string]string{"Retry-After": "3600"}})
	res, err = r.Generate(context.Background(), set)
	var rle *scm.RateLimitError
	if !errors.As(err, &rle) || rle.Status != http.StatusTooManyRequests || rle.RetryAfter.Hours() != 1 {
		t.Fatalf("err = %v, want a RateLimitError of one hour", err)
	}
	if names(res) != "svc-a-main,svc-b-trunk" || !res.Generators[0].Stale {
		t.Fatalf("the last good Applications were not kept: %s", names(res))
	}
}

// TestGitHubTokens: the token comes from the tokenRef Secret and never
// shows in an error; a wrong token, a missing Secret, and (in strict
// mode) an unlabelled Secret fail, naming the Secret.
func TestGitHubTokens(t *testing.T) {
	f, api := forge(t)
	set := load(t, scmSet(api, ""))
	f.Token = "another-token"
	_, err := appset.Generate(context.Background(), set, options(objects()))
	if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("wrong token: err = %v", err)
	}
	_, err = appset.Generate(context.Background(), set, options(appset.StaticObjects{}))
	if err == nil || !strings.Contains(err.Error(), "argocd/github-token") {
		t.Fatalf("missing secret: err = %v", err)
	}
	unlabelled := objects()
	unlabelled.Secrets["argocd/github-token"] = &corev1.Secret{Data: map[string][]byte{"token": []byte("another-token")}}
	p := github.New(scm.Options{Objects: unlabelled, TokenRefStrict: true})
	o := appset.DefaultOptions()
	o.SCMProviders = map[string]appset.SCMProvider{github.Key: p}
	if _, err = appset.Generate(context.Background(), set, o); err == nil || !strings.Contains(err.Error(), "strict") || strings.Contains(err.Error(), "another-token") {
		t.Fatalf("strict mode: err = %v", err)
	}
	o.SCMProviders = map[string]appset.SCMProvider{github.Key: github.New(scm.Options{Objects: unlabelled})}
	if _, err = appset.Generate(context.Background(), set, o); err != nil {
		t.Fatalf("without strict mode: %v", err)
	}
}

// TestGitHubConfigAndPolicy: a field Argo CD's github block does not have
// is an error naming it; a custom API outside the allowed list and
// disabled SCM providers are refused.
func TestGitHubConfigAndPolicy(t *testing.T) {
	_, api := forge(t)
	o := options(objects())
	_, err := appset.Generate(context.Background(), load(t, scmSet(api, "        organisation: typo\n")), o)
	var ce *scm.ConfigError
	if !errors.As(err, &ce) || ce.Field != "organisation" {
		t.Fatalf("err = %v, want a ConfigError naming organisation", err)
	}
	o.SCM = appset.SCMPolicy{AllowedAPIs: []string{"https://github.example.com/"}}
	if _, err = appset.Generate(context.Background(), load(t, scmSet(api, "")), o); !errors.Is(err, appset.ErrSCMNotAllowed) {
		t.Fatalf("err = %v, want ErrSCMNotAllowed", err)
	}
	o.SCM = appset.SCMPolicy{AllowedAPIs: []string{api + "/"}}
	if _, err = appset.Generate(context.Background(), load(t, scmSet(api, "")), o); err != nil {
		t.Fatalf("allowed api: %v", err)
	}
	o.SCM = appset.SCMPolicy{Disabled: true}
	if _, err = appset.Generate(context.Background(), load(t, scmSet(api, "")), o); !errors.Is(err, appset.ErrSCMDisabled) {
		t.Fatalf("err = %v, want ErrSCMDisabled", err)
	}
}

// TestGitHubApp: appSecretName authenticates as a GitHub App
// installation: the App's JWT buys an installation token, which lists the
// pull requests.
func TestGitHubApp(t *testing.T) {
	f, api := forge(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	app := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "gh-app-repo-creds"}, Data: map[string][]byte{
		"githubAppID": []byte("12345"), "githubAppInstallationID": []byte("678"), "githubAppPrivateKey": keyPEM,
		"githubAppEnterpriseBaseUrl": []byte(api + "/api/v3"),
	}}
	doc := strings.Replace(fmt.Sprintf(prSet, api), "tokenRef: {secretName: github-token, key: token}", "appSecretName: gh-app-repo-creds", 1)
	res, err := appset.Generate(context.Background(), load(t, doc), options(objects(app)))
	if err != nil {
		t.Fatal(err)
	}
	if names(res) != "preview-7,preview-8" || f.AppTokens() != 1 {
		t.Fatalf("apps = %s, installation tokens = %d", names(res), f.AppTokens())
	}
	if strings.Contains(fmt.Sprint(err), string(keyPEM)) {
		t.Fatal("key in error")
	}
}
