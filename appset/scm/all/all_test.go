package all_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/appset/scm"
	"github.com/kubegitops/gitops/appset/scm/all"
	"github.com/kubegitops/gitops/appset/scm/bitbucketcloud"
	"github.com/kubegitops/gitops/internal/forgetest"
)

const token = "s3cr3t-forge-token"

// forgeCase is one forge as the conformance tests drive it.
type forgeCase struct {
	name string
	// org is how the forge names the organisation.
	org string
	// serve starts the forge's API and returns its URL.
	serve func(*forgetest.Forge, testing.TB) string
	// scm and pr are the generators' provider blocks (YAML, indented
	// under the generator), with %[1]s the API URL.
	scm, pr string
	// httpsURL is svc-a's https clone URL.
	httpsURL string
	// paged is the request of the second page of repositories ("" when
	// the forge does not page them).
	paged string
	// prLabels: the forge has pull request labels.
	prLabels bool
	// shortSHA: the forge reports 12-character head SHAs.
	shortSHA bool
}

var forges = []forgeCase{
	{name: "github", org: "myorg", serve: (*forgetest.Forge).GitHub, httpsURL: "https://github.test/myorg/svc-a.git", paged: "/api/v3/orgs/myorg/repos?page=2", prLabels: true,
		scm: "github: {organization: myorg, api: '%[1]s/', tokenRef: {secretName: forge-token, key: token}}",
		pr:  "github: {owner: myorg, repo: svc-a, api: '%[1]s/', tokenRef: {secretName: forge-token, key: token}, labels: [preview]}"},
	{name: "gitlab", org: "myorg", serve: (*forgetest.Forge).GitLab, httpsURL: "https://gitlab.test/myorg/svc-a.git", paged: "/api/v4/groups/myorg/projects?", prLabels: true,
		scm: "gitlab: {group: myorg, api: '%[1]s', tokenRef: {secretName: forge-token, key: token}}",
		pr:  "gitlab: {project: myorg/svc-a, api: '%[1]s', tokenRef: {secretName: forge-token, key: token}, labels: [preview], pullRequestState: opened}"},
	{name: "gitea", org: "myorg", serve: (*forgetest.Forge).Gitea, httpsURL: "https://gitea.test/myorg/svc-a", paged: "/api/v1/orgs/myorg/repos?limit=50&page=2", prLabels: true,
		scm: "gitea: {owner: myorg, api: '%[1]s', tokenRef: {secretName: forge-token, key: token}}",
		pr:  "gitea: {owner: myorg, repo: svc-a, api: '%[1]s', tokenRef: {secretName: forge-token, key: token}, labels: [preview]}"},
	{name: "bitbucketServer", org: "MYORG", serve: (*forgetest.Forge).BitbucketServer, httpsURL: "https://bitbucket.test/scm/myorg/svc-a.git", paged: "/rest/api/1.0/projects/MYORG/repos?limit=100&start=2",
		scm: "bitbucketServer: {project: MYORG, api: '%[1]s', bearerToken: {tokenRef: {secretName: forge-token, key: token}}}",
		pr:  "bitbucketServer: {project: MYORG, repo: svc-a, api: '%[1]s', basicAuth: {username: ann, passwordRef: {secretName: forge-token, key: token}}}"},
	{name: "bitbucket", org: "myorg", serve: (*forgetest.Forge).BitbucketCloud, httpsURL: "https://bitbucket.org/myorg/svc-a.git", paged: "/2.0/repositories/myorg?page=2", shortSHA: true,
		scm: "bitbucket: {owner: myorg, user: ann, appPasswordRef: {secretName: forge-token, key: token}}",
		pr:  "bitbucket: {owner: myorg, repo: svc-a, api: '%[1]s', bearerToken: {tokenRef: {secretName: forge-token, key: token}}}"},
	{name: "azureDevOps", org: "myorg/proj", serve: (*forgetest.Forge).AzureDevOps, httpsURL: "https://dev.azure.test/myorg/proj/_git/svc-a", prLabels: true,
		scm: "azureDevOps: {organization: myorg, teamProject: proj, api: '%[1]s', accessTokenRef: {secretName: forge-token, key: token}}",
		pr:  "azuredevops: {organization: myorg, project: proj, repo: svc-a, api: '%[1]s', tokenRef: {secretName: forge-token, key: token}, labels: [preview]}"},
}

// fixture is an organisation of three repositories (two services with a
// deploy folder, one of them with two branches) and three pull requests
// on svc-a, two labelled preview.
func (fc forgeCase) fixture(t *testing.T) (*forgetest.Forge, appset.Options) {
	f := forgetest.New()
	f.Token = token
	f.AddRepo(forgetest.Repo{Org: fc.org, Name: "svc-a", DefaultBranch: "main", Branches: map[string]string{"main": "aaaa1111bbbb2222cccc", "feature": "ffff0000"}, Topics: []string{"deploy-ok"}, Files: []string{"deploy/kustomization.yaml"}})
	f.AddRepo(forgetest.Repo{Org: fc.org, Name: "docs", DefaultBranch: "main", Branches: map[string]string{"main": "dddd4444"}})
	f.AddRepo(forgetest.Repo{Org: fc.org, Name: "svc-b", DefaultBranch: "trunk", Branches: map[string]string{"trunk": "bbbb2222cccc3333dddd"}, Files: []string{"deploy/app.yaml"}})
	labels := func(l ...string) []string {
		if fc.prLabels {
			return l
		}
		return nil
	}
	f.OpenPR(forgetest.PR{Org: fc.org, Repo: "svc-a", Number: 7, Title: "feat: login", Branch: "feature/Login_Page", Target: "main", SHA: "0123456789abcdef0123", Author: "ann", Labels: labels("preview")})
	f.OpenPR(forgetest.PR{Org: fc.org, Repo: "svc-a", Number: 8, Title: "fix: typo", Branch: "typo", Target: "main", SHA: "fedcba9876543210fedc", Author: "bob", Labels: labels("preview")})
	f.OpenPR(forgetest.PR{Org: fc.org, Repo: "svc-a", Number: 9, Title: "chore: bump", Branch: "chore", Target: "main", SHA: "1111222233334444", Author: "cy", Labels: labels("other")})
	api := fc.serve(f, t)
	objs := appset.StaticObjects{Secrets: map[string]*corev1.Secret{"argocd/forge-token": {Data: map[string][]byte{"token": []byte(token)}}}}
	o := appset.DefaultOptions()
	all.Register(&o, scm.Options{Objects: objs})
	if fc.name == "bitbucket" {
		// Argo CD's bitbucket scmProvider block names no API: point the
		// provider at the test's.
		o.SCMProviders["bitbucket"] = bitbucketcloud.New(scm.Options{Objects: objs}).WithSCMAPI(api)
	}
	fc.scm, fc.pr = strings.ReplaceAll(fc.scm, "%[1]s", api), strings.ReplaceAll(fc.pr, "%[1]s", api)
	forgeBlocks[fc.name] = [2]string{fc.scm, fc.pr}
	return f, o
}

// forgeBlocks holds each case's blocks with the API filled in (set by
// fixture; tests of one forge run one at a time).
var forgeBlocks = map[string][2]string{}

func load(t *testing.T, doc string) *appset.ApplicationSet {
	t.Helper()
	sets, err := appset.Load(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
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

func scmSet(block, extra string) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: repos, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - scmProvider:
      cloneProtocol: https
      ` + block + `
      filters:
      - repositoryMatch: ^svc
        pathsExist: [deploy]
` + extra + `  template:
    metadata: {name: '{{.repository}}-{{.branchNormalized}}', annotations: {url: '{{.url}}', sha: '{{.short_sha_7}}'}}
    spec: {project: default, source: {repoURL: '{{.url}}', targetRevision: '{{.sha}}', path: deploy}, destination: {server: https://kubernetes.default.svc, namespace: '{{.repository}}'}}
`
}

func prSet(block string) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: previews, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - pullRequest:
      ` + block + `
      filters:
      - titleMatch: '^(feat|fix):'
  template:
    metadata: {name: 'preview-{{.number}}', annotations: {branch: '{{.branch_slug}}', sha: '{{.head_sha}}', author: '{{.author}}'}}
    spec: {project: default, source: {repoURL: https://git.test/svc-a.git, targetRevision: '{{.head_sha}}', path: deploy}, destination: {server: https://kubernetes.default.svc, namespace: 'pr-{{.number}}'}}
`
}

// TestSCMProviderForges: on every forge, an organisation of three
// repositories (read over two pages where the forge pages them), one
// filtered out, makes two Applications with the https clone URL and the
// default branch's head; pathsExist asks the forge.
func TestSCMProviderForges(t *testing.T) {
	for _, fc := range forges {
		t.Run(fc.name, func(t *testing.T) {
			f, o := fc.fixture(t)
			res, err := appset.Generate(context.Background(), load(t, scmSet(forgeBlocks[fc.name][0], "")), o)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(res); got != "svc-a-main,svc-b-trunk" {
				t.Fatalf("apps = %s, want svc-a-main,svc-b-trunk", got)
			}
			if a := res.Applications[0].GetAnnotations(); a["url"] != fc.httpsURL || a["sha"] != "aaaa111" {
				t.Errorf("svc-a: url %q sha %q, want %q aaaa111", a["url"], a["sha"], fc.httpsURL)
			}
			if fc.paged != "" && !slices.ContainsFunc(f.Requests(), func(r string) bool {
				return strings.HasPrefix(r, fc.paged) || (strings.HasPrefix(r, strings.Split(fc.paged, "?")[0]) && strings.Contains(r, "page=2"))
			}) {
				t.Errorf("the second page was not asked (%s): %v", fc.paged, f.Requests())
			}
		})
	}
}

// TestSCMProviderAllBranchesForges: allBranches makes one Application per
// branch on every forge.
func TestSCMProviderAllBranchesForges(t *testing.T) {
	for _, fc := range forges {
		t.Run(fc.name, func(t *testing.T) {
			_, o := fc.fixture(t)
			block := forgeBlocks[fc.name][0]
			block = block[:len(block)-1] + ", allBranches: true}"
			res, err := appset.Generate(context.Background(), load(t, scmSet(block, "")), o)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(res); got != "svc-a-feature,svc-a-main,svc-b-trunk" {
				t.Fatalf("apps = %s", got)
			}
		})
	}
}

// TestPullRequestForges: on every forge, one Application per open pull
// request passing the labels and the filter; closing one removes its
// Application at the next generation.
func TestPullRequestForges(t *testing.T) {
	for _, fc := range forges {
		t.Run(fc.name, func(t *testing.T) {
			f, o := fc.fixture(t)
			set := load(t, prSet(forgeBlocks[fc.name][1]))
			r := appset.NewRunner(o)
			res, err := r.Generate(context.Background(), set)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(res); got != "preview-7,preview-8" {
				t.Fatalf("apps = %s, want preview-7,preview-8", got)
			}
			wantSHA := "0123456789abcdef0123"
			if fc.shortSHA {
				wantSHA = wantSHA[:12]
			}
			if a := res.Applications[0].GetAnnotations(); a["branch"] != "feature-login-page" || a["sha"] != wantSHA || a["author"] != "ann" {
				t.Errorf("preview-7 parameters = %v", a)
			}
			f.ClosePR(fc.org, "svc-a", 7)
			if res, err = r.Generate(context.Background(), set); err != nil {
				t.Fatal(err)
			}
			if got := names(res); got != "preview-8" {
				t.Fatalf("after closing #7: apps = %s, want preview-8", got)
			}
		})
	}
}

// TestRateLimitsForges: on every forge, a 429 with a short Retry-After is
// waited out; one of an hour fails the generator with a
// *scm.RateLimitError and the set keeps its Applications.
func TestRateLimitsForges(t *testing.T) {
	for _, fc := range forges {
		t.Run(fc.name, func(t *testing.T) {
			f, o := fc.fixture(t)
			set := load(t, prSet(forgeBlocks[fc.name][1]))
			r := appset.NewRunner(o)
			f.LimitNext(forgetest.Limit{Status: http.StatusTooManyRequests, Headers: map[string]string{"Retry-After": "0"}})
			res, err := r.Generate(context.Background(), set)
			if err != nil || names(res) != "preview-7,preview-8" {
				t.Fatalf("after a short limit: %v, %s", err, names(res))
			}
			f.LimitNext(forgetest.Limit{Status: http.StatusTooManyRequests, Headers: map[string]string{"Retry-After": "3600"}})
			res, err = r.Generate(context.Background(), set)
			var rle *scm.RateLimitError
			if !errors.As(err, &rle) || rle.RetryAfter.Hours() != 1 {
				t.Fatalf("err = %v, want a RateLimitError of an hour", err)
			}
			if names(res) != "preview-7,preview-8" {
				t.Fatalf("last good Applications not kept: %s", names(res))
			}
		})
	}
}

// TestTokensForges: on every forge, a token the forge refuses fails the
// generator without the token in the error.
func TestTokensForges(t *testing.T) {
	for _, fc := range forges {
		t.Run(fc.name, func(t *testing.T) {
			f, o := fc.fixture(t)
			f.Token = "the-forge-wants-another"
			_, err := appset.Generate(context.Background(), load(t, prSet(forgeBlocks[fc.name][1])), o)
			if err == nil || strings.Contains(err.Error(), token) || strings.Contains(err.Error(), f.Token) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}
