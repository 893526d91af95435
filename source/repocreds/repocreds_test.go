package repocreds_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/source/repocreds"
)

const config = `
apiVersion: v1
kind: Secret
metadata:
  name: team-repo
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: repository}
stringData:
  url: https://git.example.com/team/app.git
  username: team-bot
  password: team-SECRET
---
apiVersion: v1
kind: Secret
metadata:
  name: charts
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: repository}
stringData:
  url: registry.example.com/charts
  type: helm
  enableOCI: "true"
  proxy: http://proxy.example.com:3128
  noProxy: .internal
---
apiVersion: v1
kind: Secret
metadata:
  name: org-creds
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: repo-creds}
data:
  url: aHR0cHM6Ly9naXQuZXhhbXBsZS5jb20v        # https://git.example.com/
  password: b3JnLVNFQ1JFVA==                      # org-SECRET
---
apiVersion: v1
kind: Secret
metadata:
  name: platform-creds
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: repo-creds}
stringData:
  url: https://git.example.com/platform
  bearerToken: platform-SECRET
---
apiVersion: v1
kind: Secret
metadata:
  name: registry-creds
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: repo-creds}
stringData:
  url: registry.example.com
  username: puller
  password: registry-SECRET
---
apiVersion: v1
kind: Secret
metadata:
  name: ssh-repo
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: repository}
stringData:
  url: git@git.example.com:team/infra.git
  sshPrivateKey: ssh-KEY-SECRET
---
apiVersion: v1
kind: Secret
metadata: {name: unrelated, namespace: argocd}
stringData: {url: https://nothing, password: x}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-tls-certs-cm, namespace: argocd}
data:
  git.example.com: |
    -----BEGIN CERTIFICATE-----
    MIIB
    -----END CERTIFICATE-----
---
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-ssh-known-hosts-cm, namespace: argocd}
data:
  ssh_known_hosts: "git.example.com ssh-ed25519 AAAA"
`

func TestLongestPrefixAndRepositorySecrets(t *testing.T) {
	s, err := repocreds.Load("config.yaml", []byte(config))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		url, kind, user, secret string
		ca, oci                 bool
	}{
		// The repository's own Secret, whatever the case and ".git".
		{"https://GIT.example.com/team/app", "basic", "team-bot", "team-SECRET", true, false},
		// No Secret of its own: the longest template prefix wins.
		{"https://git.example.com/platform/infra.git", "bearer", "", "platform-SECRET", true, false},
		{"https://git.example.com/other/repo", "basic", "", "org-SECRET", true, false},
		// A repository Secret without credentials takes the template's and
		// keeps its own enableOCI.
		{"registry.example.com/charts", "basic", "puller", "registry-SECRET", false, true},
	}
	for _, c := range cases {
		got := s.For(c.url)
		if got == nil {
			t.Fatalf("%s: no credentials", c.url)
		}
		secret := got.Password + got.BearerToken
		if c.oci && (got.Proxy != "http://proxy.example.com:3128" || got.NoProxy != ".internal") {
			t.Errorf("%s: proxy %q no-proxy %q, want the repository's own", c.url, got.Proxy, got.NoProxy)
		}
		if got.Kind() != c.kind || got.Username != c.user || secret != c.secret || (len(got.CAData) > 0) != c.ca || got.EnableOCI != c.oci {
			t.Errorf("%s: got %s user %q ca %v oci %v (secret match %v)", c.url, got.Kind(), got.Username, len(got.CAData) > 0, got.EnableOCI, secret == c.secret)
		}
	}
	if c := s.For("git@git.example.com:team/infra"); c == nil || c.Kind() != "ssh" || string(c.KnownHosts) != "git.example.com ssh-ed25519 AAAA" {
		t.Errorf("ssh repository: %v", c)
	}
	if c := s.For("https://elsewhere.example.com/x"); c != nil {
		t.Errorf("unrelated URL got %v", c)
	}
	repos, templates := s.Repositories()
	if len(repos) != 3 || len(templates) != 3 || templates[0].Secret != "argocd/platform-creds" {
		t.Errorf("repositories %d, templates %d (first %s)", len(repos), len(templates), templates[0].Secret)
	}
	var out strings.Builder
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		fmt.Fprintf(&out, verb, s)
		fmt.Fprintf(&out, verb, repos)
	}
	js, _ := json.Marshal(s)
	out.Write(js)
	js, _ = json.Marshal(templates)
	out.Write(js)
	if strings.Contains(out.String(), "SECRET") {
		t.Errorf("a secret printed: %s", out.String())
	}
}

// A malformed value of a field Argo CD reads keeps the Secret loaded, but
// the repositories it serves carry a *FieldError naming the Secret and the
// field (never the value): their apps are refused rather than read
// without the field. Only a Secret without a url is left out.
func TestMalformedFieldsRefuseOnlyTheirRepositories(t *testing.T) {
	secret := func(name, fields string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\n  namespace: argocd\n  labels: {argocd.argoproj.io/secret-type: repository}\n" + fields
	}
	cases := map[string]string{
		"stringData:\n  url: https://x.example/a\n  password: pw\n  enableOCI: maybe-SECRET\n":                                                 `"enableOCI": not a boolean`,
		"stringData:\n  url: https://x.example/a\n  password: pw\n  enableLfs: yes-SECRET\n":                                                   `"enableLfs": not a boolean`,
		"stringData:\n  url: https://x.example/a\n  githubAppID: SECRET\n  githubAppPrivateKey: k\n":                                           `"githubAppID": not a number`,
		"stringData:\n  url: https://x.example/a\n  githubAppID: \"1\"\n  githubAppInstallationID: \"2\"\n  githubAppPrivateKey: KEY-SECRET\n": `"githubAppPrivateKey": not a PEM key`,
		"data:\n  url: aHR0cHM6Ly94LmV4YW1wbGUvYQ==\n  password: not-base64-SECRET!\n":                                                         `data.password is not base64`,
		"stringData:\n  url: https://x.example/a\n  gcpServiceAccountKey: SECRET\n":                                                            `"gcpServiceAccountKey": not a JSON`,
	}
	for fields, want := range cases {
		s, err := repocreds.Load("x", []byte(secret("s1", fields)+"---\n"+secret("other", "stringData:\n  url: https://y.example/b\n  password: other-pw\n")))
		if err != nil {
			t.Fatalf("%q: the Secret was refused whole: %v", fields, err)
		}
		c := s.For("https://x.example/a")
		var fe *repocreds.FieldError
		if c == nil || !errors.As(c.Err, &fe) || fe.Secret != "argocd/s1" || !strings.Contains(c.Err.Error(), want) || strings.Contains(c.Err.Error(), "SECRET") {
			t.Errorf("%q: credentials %v error %v, want a FieldError %q naming argocd/s1 and no value", fields, c, c.Err, want)
		}
		if o := s.For("https://y.example/b"); o == nil || o.Err != nil || o.Password != "other-pw" {
			t.Errorf("%q: the other Secret is not served: %v", fields, o)
		}
	}
	for fields, want := range map[string]string{
		"stringData:\n  password: x\n":       "url is required",
		"data:\n  url: not-base64-SECRET!\n": "data.url is not base64",
	} {
		_, err := repocreds.Load("x", []byte(secret("s1", fields)))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "argocd/s1") || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%q: %v, want %q naming the secret and no value", fields, err, want)
		}
	}
}

// insecureOCIForceHttp (Argo CD: reach the repository's OCI registry over
// plain HTTP) is read into the credentials, kept when a credential
// template supplies the secrets, and refused by name when not a boolean.
func TestInsecureOCIForceHTTPIsRead(t *testing.T) {
	s, err := repocreds.Load("x", []byte(`apiVersion: v1
kind: Secret
metadata:
  name: local-charts
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: repository}
stringData:
  url: registry.local:5000/charts
  type: oci
  insecureOCIForceHttp: "true"
---
apiVersion: v1
kind: Secret
metadata:
  name: local-creds
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: repo-creds}
stringData:
  url: registry.local:5000/
  username: bot
  password: bot-SECRET
---
apiVersion: v1
kind: Secret
metadata:
  name: tls-charts
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: repository}
stringData:
  url: registry.example.com/charts
  type: oci
`))
	if err != nil {
		t.Fatal(err)
	}
	c := s.For("registry.local:5000/charts")
	if c == nil || !c.InsecureOCIForceHTTP || !c.EnableOCI || c.Username != "bot" {
		t.Fatalf("credentials of the plain-HTTP registry: %v (force HTTP %v)", c, c != nil && c.InsecureOCIForceHTTP)
	}
	if c := s.For("registry.example.com/charts"); c == nil || c.InsecureOCIForceHTTP {
		t.Fatalf("a registry without the field is forced to HTTP: %v", c)
	}
	bad, err := repocreds.Load("x", []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s1\n  namespace: argocd\n  labels: {argocd.argoproj.io/secret-type: repository}\nstringData:\n  url: r.example/c\n  insecureOCIForceHttp: yes-SECRET\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c := bad.For("r.example/c"); c == nil || c.Err == nil || !strings.Contains(c.Err.Error(), `"insecureOCIForceHttp": not a boolean`) || strings.Contains(c.Err.Error(), "SECRET") {
		t.Fatalf("a malformed insecureOCIForceHttp: %v", c)
	}
}

// A field Argo CD does not define (a typo such as passwd, or a key of
// another tool), a field Argo CD does not read on that kind of Secret, a
// type it does not know and a number where a string belongs are named in
// Warnings, and the rest of the Secret serves: one field never drops the
// Secret around it.
func TestUnknownFieldsAreNamedAndTheRestServes(t *testing.T) {
	secret := func(typ, fields string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s1\n  namespace: argocd\n  labels: {argocd.argoproj.io/secret-type: " + typ + "}\nstringData:\n  url: https://git.example.com/org\n" + fields
	}
	for _, c := range []struct {
		typ, fields, field, want string
	}{
		{"repository", "  username: bot\n  password: pw\n  passwd: SECRET\n", "passwd", "not a field of Argo CD's repository Secrets"},
		{"repo-creds", "  username: bot\n  password: pw\n  passwd: SECRET\n", "passwd", "not a field of Argo CD's repository Secrets"},
		{"repo-creds", "  username: bot\n  password: pw\n  enableLfs: \"true\"\n", "enableLfs", "does not read this field on repo-creds"},
		{"repository", "  username: bot\n  password: pw\n  type: svn\n", "type", `type "svn" is not git, helm or oci`},
		{"repository", "  username: bot\n  password: pw\n  depth: \"5\"\n", "depth", "accepted without effect"},
		{"repository", "  username: bot\n  password: pw\n  webhookManifestCacheWarmDisabled: \"true\"\n", "webhookManifestCacheWarmDisabled", "accepted without effect"},
		{"repository", "  username: bot\n  password: pw\n  githubAppInstallationID: 2\n", "githubAppInstallationID", "API server refuses such a Secret"},
	} {
		s, err := repocreds.Load("x", []byte(secret(c.typ, c.fields)))
		if err != nil {
			t.Fatalf("%s %q: refused whole: %v", c.typ, c.fields, err)
		}
		var hit bool
		for _, w := range s.Warnings() {
			if w.Secret == "argocd/s1" && w.Field == c.field && strings.Contains(w.Message, c.want) && !strings.Contains(w.String(), "SECRET") {
				hit = true
			}
		}
		if !hit {
			t.Errorf("%s %q: warnings %v, want one on %s saying %q", c.typ, c.fields, s.Warnings(), c.field, c.want)
		}
		if got := s.For("https://git.example.com/org"); got == nil || got.Err != nil || got.Username != "bot" || got.Password != "pw" {
			t.Errorf("%s %q: credentials %v, want user bot served", c.typ, c.fields, got)
		}
	}
}
