package repocreds_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/source/repocreds"
)

// secretDoc is one Argo CD Secret of type typ (repository or repo-creds)
// with the given url, password and project ("" leaves it unscoped).
func secretDoc(name, typ, url, password, project string) string {
	doc := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: argocd, labels: {argocd.argoproj.io/secret-type: %s}}\nstringData:\n  url: %s\n  username: bot\n  password: %s\n", name, typ, url, password)
	if project != "" {
		doc += "  project: " + project + "\n"
	}
	return doc
}

// The precedence of project-scoped Secrets (Argo CD's
// secretsRepositoryBackend.getRepositorySecret, extended to templates): a
// repository Secret scoped to the app's project wins over the unscoped one
// of the same URL; one scoped to another project is never used, whatever
// the order of the Secrets; templates follow the longest prefix, the
// project's own winning at equal length; a lookup for no project (For)
// sees unscoped Secrets only.
func TestProjectScopedPrecedence(t *testing.T) {
	const repo = "https://git.example.com/team/app.git"
	cases := []struct {
		name    string
		secrets []string
		project string
		want    string // the password chosen, "" for no credentials
	}{
		{"scoped to the project wins over unscoped", []string{
			secretDoc("unscoped", "repository", repo, "unscoped-pw", ""),
			secretDoc("scoped", "repository", repo, "a-pw", "a"),
		}, "a", "a-pw"},
		{"scoped to the project wins over unscoped, listed first", []string{
			secretDoc("a-scoped", "repository", repo, "a-pw", "a"),
			secretDoc("z-unscoped", "repository", repo, "unscoped-pw", ""),
		}, "a", "a-pw"},
		{"another project falls back to unscoped", []string{
			secretDoc("unscoped", "repository", repo, "unscoped-pw", ""),
			secretDoc("scoped", "repository", repo, "a-pw", "a"),
		}, "b", "unscoped-pw"},
		{"scoped to another project only: none", []string{
			secretDoc("scoped", "repository", repo, "a-pw", "a"),
		}, "b", ""},
		{"no project: scoped Secrets are not used", []string{
			secretDoc("scoped", "repository", repo, "a-pw", "a"),
		}, "", ""},
		{"a repository Secret of another project does not hide the template", []string{
			secretDoc("scoped", "repository", repo, "a-pw", "a"),
			secretDoc("org", "repo-creds", "https://git.example.com/", "org-pw", ""),
		}, "b", "org-pw"},
		{"template scoped to another project is skipped", []string{
			secretDoc("team-a", "repo-creds", "https://git.example.com/team", "a-pw", "a"),
			secretDoc("org", "repo-creds", "https://git.example.com/", "org-pw", ""),
		}, "b", "org-pw"},
		{"longest template prefix wins over the project's own", []string{
			secretDoc("org-a", "repo-creds", "https://git.example.com/", "a-pw", "a"),
			secretDoc("team", "repo-creds", "https://git.example.com/team", "team-pw", ""),
		}, "a", "team-pw"},
		{"at equal prefix the project's template wins", []string{
			secretDoc("a-unscoped", "repo-creds", "https://git.example.com/team", "unscoped-pw", ""),
			secretDoc("b-scoped", "repo-creds", "https://git.example.com/team/", "a-pw", "a"),
		}, "a", "a-pw"},
		{"repository Secret before template", []string{
			secretDoc("team", "repo-creds", "https://git.example.com/team", "team-pw", "a"),
			secretDoc("repo", "repository", repo, "repo-pw", ""),
		}, "a", "repo-pw"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := repocreds.Load("repos.yaml", []byte(strings.Join(c.secrets, "---\n")))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if cr := st.ForProject(c.project, repo); cr != nil {
				got = cr.Password
			}
			if got != c.want {
				t.Fatalf("project %q: password %q, want %q", c.project, got, c.want)
			}
			var live repocreds.Live
			live.Set(st)
			if cr := live.ForProject(c.project, repo); (cr == nil && got != "") || (cr != nil && cr.Password != got) {
				t.Fatalf("Live.ForProject disagrees with Store.ForProject: %v", cr)
			}
			if c.project == "" {
				if cr := st.For(repo); (cr == nil) != (got == "") {
					t.Fatalf("For disagrees with ForProject(\"\"): %v", cr)
				}
			}
		})
	}
}

// Before project scoping, For served a Secret scoped to a project to
// every caller: a lookup made for no project must not see it.
func TestForIgnoresScopedSecrets(t *testing.T) {
	st, err := repocreds.Load("repos.yaml", []byte(secretDoc("scoped", "repository", "https://git.example.com/a.git", "a-SECRET", "a")))
	if err != nil {
		t.Fatal(err)
	}
	if c := st.For("https://git.example.com/a.git"); c != nil {
		t.Fatalf("For returned the credentials of a Secret scoped to project a: %v", c)
	}
	if c := st.ForProject("a", "https://git.example.com/a.git"); c == nil || c.Password != "a-SECRET" {
		t.Fatalf("ForProject(a) did not return the Secret's credentials: %v", c)
	}
}
