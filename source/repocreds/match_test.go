package repocreds_test

import (
	"context"
	"errors"
	"strings"
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
// are read, named once in a Warning, and never serve a read.
func TestWriteSecretsAreReadNotUsed(t *testing.T) {
	s := load(t, repocreds.DefaultOptions(),
		repoSecret("write", "repository-write", map[string]string{"url": "https://git.example.com/org/app", "password": "write-pw"}),
		repoSecret("write-creds", "repo-write-creds", map[string]string{"url": "https://git.example.com/", "password": "write-pw"}))
	if c := s.For("https://git.example.com/org/app"); c != nil {
		t.Errorf("a write Secret serves a read: %v", c)
	}
	repos, templates := s.WriteRepositories()
	if len(repos) != 1 || len(templates) != 1 || !repos[0].Write {
		t.Errorf("write repositories %v, templates %v", repos, templates)
	}
	named := map[string]bool{}
	for _, w := range s.Warnings() {
		if w.Field == "" && strings.Contains(w.Message, "source hydrator") {
			named[w.Secret] = true
		}
	}
	if !named["argocd/write"] || !named["argocd/write-creds"] {
		t.Errorf("warnings %v, want each write Secret named", s.Warnings())
	}
}
