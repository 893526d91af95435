package repocreds_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/helmrepo"
	"github.com/kubegitops/gitops/source/repocreds"
)

// URLs find their Secrets as Argo CD compares them (NormalizeGitURL, its
// TestSameURL pairs), an OCI registry with or without oci:// (as Argo CD
// matches Helm charts' repositories), and a template's trailing '/' keeps
// it to its own organisation.
func TestURLsMatchAsArgoCDMatchesThem(t *testing.T) {
	s := load(t, repocreds.DefaultOptions(),
		repoSecret("ssh", "repository", map[string]string{"url": "ssh://git@GITHUB.com/argoproj/test", "username": "ssh-user", "password": "x"}),
		repoSecret("https", "repository", map[string]string{"url": "https://GITHUB.com/argoproj/other.git", "username": "https-user", "password": "x"}),
		repoSecret("plain-reg", "repository", map[string]string{"url": "registry.example.com/charts", "type": "helm", "enableOCI": "true", "username": "reg-user", "password": "x"}),
		repoSecret("oci-reg", "repository", map[string]string{"url": "oci://oci.example.com/charts", "username": "oci-user", "password": "x"}),
		repoSecret("org", "repo-creds", map[string]string{"url": "https://git.example.com/org/", "username": "org-user", "password": "x"}),
		repoSecret("oci-tmpl", "repo-creds", map[string]string{"url": "oci://tmpl.example.com/team", "type": "oci", "username": "tmpl-user", "password": "x"}),
	)
	for url, want := range map[string]string{
		"git@github.com:argoproj/test.git":         "ssh-user",
		"ssh://git@github.com/argoproj/test":       "ssh-user",
		"https://github.com/argoproj/other":        "https-user",
		"registry.example.com/charts":              "reg-user",
		"oci://registry.example.com/charts":        "reg-user",
		"oci://oci.example.com/charts":             "oci-user",
		"oci.example.com/charts":                   "oci-user",
		"https://git.example.com/org/app":          "org-user",
		"https://git.example.com/org-other/app":    "",
		"oci://tmpl.example.com/team/charts":       "tmpl-user",
		"tmpl.example.com/team/charts":             "tmpl-user",
		"oci://registry.example.com/charts-other":  "",
		"oci://registry.example.com.evil/charts":   "",
		"https://github.com/argoproj/test-private": "",
	} {
		c := s.For(url)
		got := ""
		if c != nil {
			got = c.Username
		}
		if got != want {
			t.Errorf("%s: user %q, want %q", url, got, want)
		}
	}
}

// The case: a Secret names a plain-HTTP registry without oci://
// and sets insecureOCIForceHttp; an app names it with oci://. The Secret
// applies (before, it did not, and the error told the user to set the
// field the Secret sets).
func TestSchemeLessSecretServesOCIURL(t *testing.T) {
	reg := chartserver.NewRegistry(t, "bot", "bot-pw")
	reg.Push("charts", chartserver.WebChart(t, "web", "1.0.0"))
	s := load(t, repocreds.DefaultOptions(), repoSecret("local", "repository", map[string]string{"url": reg.Host + "/charts",
		"type": "helm", "enableOCI": "true", "insecureOCIForceHttp": "true", "username": "bot", "password": "bot-pw"}))
	opts := helmrepo.DefaultOptions()
	opts.CacheDir = t.TempDir()
	charts, err := helmrepo.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	url := "oci://" + reg.Host + "/charts"
	rev, err := charts.Resolve(context.Background(), source.Repository{URL: url, Chart: "web", Credentials: s.For(url)}, "1.x")
	if err != nil || rev.Commit != "1.0.0" {
		t.Fatalf("an oci:// URL with the scheme-less Secret: %v %v", rev, err)
	}
	// Without any Secret the error says what is missing, and no Secret
	// sets it.
	_, err = charts.Resolve(context.Background(), source.Repository{URL: url, Chart: "web"}, "1.x")
	if !errors.Is(err, helmrepo.ErrPlainHTTPRegistry) {
		t.Fatalf("no Secret: %v", err)
	}
}

// repository-write and repo-write-creds Secrets (the source hydrator's)
// serve pushes only, by the read rules over the write Secrets (a project's
// own first, templates by longest prefix), and repository Secrets never
// serve a push.
func TestWriteSecretsServePushesOnly(t *testing.T) {
	s := load(t, repocreds.DefaultOptions(),
		repoSecret("read", "repository", map[string]string{"url": "https://git.example.com/org/app", "password": "read-pw"}),
		repoSecret("write", "repository-write", map[string]string{"url": "https://git.example.com/org/app", "password": "write-pw"}),
		repoSecret("write-team", "repository-write", map[string]string{"url": "https://git.example.com/org/app", "password": "team-pw", "project": "team"}),
		repoSecret("write-creds", "repo-write-creds", map[string]string{"url": "https://git.example.com/", "password": "creds-pw"}))
	if c := s.For("https://git.example.com/org/app"); c == nil || c.Password != "read-pw" {
		t.Errorf("read: %v, want the repository Secret", c)
	}
	for _, tc := range []struct{ project, url, want string }{
		{"", "https://git.example.com/org/app", "write-pw"},
		{"team", "https://git.example.com/org/app.git", "team-pw"},
		{"other", "https://git.example.com/org/app", "write-pw"},
		{"", "https://git.example.com/org/other", "creds-pw"},
	} {
		if c := s.WriteForProject(tc.project, tc.url); c == nil || c.Password != tc.want {
			t.Errorf("write %s for project %q: %v, want %s", tc.url, tc.project, c, tc.want)
		}
	}
	onlyRead := load(t, repocreds.DefaultOptions(),
		repoSecret("read", "repository", map[string]string{"url": "https://git.example.com/org/app", "password": "read-pw"}),
		repoSecret("read-creds", "repo-creds", map[string]string{"url": "https://git.example.com/", "password": "read-pw"}))
	if c := onlyRead.WriteForProject("", "https://git.example.com/org/app"); c != nil {
		t.Errorf("a repository Secret serves a push: %v", c)
	}
	repos, templates := s.WriteRepositories()
	if len(repos) != 2 || len(templates) != 1 || !repos[0].Write {
		t.Errorf("write repositories %v, templates %v", repos, templates)
	}
	var live repocreds.Live
	live.Set(s)
	if c := live.WriteForProject("team", "https://git.example.com/org/app"); c == nil || c.Password != "team-pw" {
		t.Errorf("Live.WriteForProject: %v", c)
	}
}
