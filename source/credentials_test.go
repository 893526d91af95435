package source

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestCredentialsAppliesToExactSchemeAndHost(t *testing.T) {
	c := Credentials{Username: "u", Password: "p"}
	repo := "https://github.com/org/repo.git"
	cases := map[string]bool{
		"https://github.com/org/repo.git/info/refs": true,
		"https://github.com/other/repo":             true, // default scope: scheme and host
		"https://GITHUB.com:443/org/repo":           true,
		"https://github.com.evil.example/org/repo":  false,
		"https://evilgithub.com/org/repo":           false,
		"https://github.com@evil.example/org/repo":  false,
		"https://api.github.com/org/repo":           false,
		"http://github.com/org/repo":                false,
		"https://github.com:8443/org/repo":          false,
		"ssh://git@github.com/org/repo":             false,
		"not a url":                                 false,
	}
	for target, want := range cases {
		if got := c.AppliesTo(repo, target); got != want {
			t.Errorf("AppliesTo(%q) = %v, want %v", target, got, want)
		}
	}
	scoped := Credentials{Password: "p", Scope: "https://git.example.com/team/"}
	for target, want := range map[string]bool{
		"https://git.example.com/team/app.git":  true,
		"https://git.example.com/team":          true,
		"https://git.example.com/teammate/app":  false,
		"https://git.example.com/other/app.git": false,
	} {
		if got := scoped.AppliesTo(repo, target); got != want {
			t.Errorf("scoped AppliesTo(%q) = %v, want %v", target, got, want)
		}
	}
	scp := Credentials{SSHPrivateKey: []byte("k")}
	if !scp.AppliesTo("git@github.com:org/repo.git", "ssh://git@github.com/org/repo.git") {
		t.Error("scp-like repository URL does not scope its own ssh URL")
	}
}

// TestCredentialTypesNeverPrintSecrets marshals and prints every public
// type that holds credentials with every verb (user-asks S12).
func TestCredentialTypesNeverPrintSecrets(t *testing.T) {
	const secret = "hunter2-very-secret"
	c := &Credentials{Username: "u", Password: secret, BearerToken: secret, SSHPrivateKey: []byte(secret), SSHPassphrase: secret, KnownHosts: []byte("kh")}
	repo := Repository{URL: "https://u:" + secret + "@host/x.git", Credentials: c}
	values := []any{c, *c, repo, &repo, []Repository{repo}, map[string]any{"r": repo}, struct{ R Repository }{repo}, Event{Repository: repo}}
	for _, v := range values {
		var out strings.Builder
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
			fmt.Fprintf(&out, verb+"\n", v)
		}
		js, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("marshal %T: %v", v, err)
		}
		text, _ := c.MarshalText()
		if all := out.String() + string(js) + string(text); strings.Contains(all, secret) {
			t.Errorf("%T leaks its secret:\n%s", v, all)
		}
	}
	if got := repo.String(); got != "https://host/x.git" {
		t.Errorf("Repository.String() = %q", got)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pw@host/r.git":       "https://host/r.git",
		"https://token@host/r.git":         "https://host/r.git",
		"ssh://git:pw@host:2222/r.git":     "ssh://git@host:2222/r.git",
		"git@github.com:org/r.git":         "git@github.com:org/r.git",
		"user:pw@github.com:org/r.git":     "redacted@github.com:org/r.git",
		"/local/path":                      "/local/path",
		"https://host/r.git?x=1":           "https://host/r.git?x=1",
		"https://u:p%40ss@host/r.git#frag": "https://host/r.git#frag",
		"https://user:pa ss@host/r.git":    "https://redacted@host/r.git",
		"https://user:p%zz@host/r.git":     "https://redacted@host/r.git",
		"http://tok%@host:80/x":            "http://redacted@host:80/x",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRepositoryKey(t *testing.T) {
	want := "github.com/org/repo"
	for _, in := range []string{
		"https://github.com/org/repo.git", "https://GitHub.com/org/repo", "https://github.com:443/org/repo/",
		"git@github.com:org/repo.git", "ssh://git@github.com/org/repo", "ssh://git@github.com:22/org/repo.git",
		"https://user:token@github.com/org/repo.git", "http://github.com/org/repo",
	} {
		if got := RepositoryKey(in); got != want {
			t.Errorf("RepositoryKey(%q) = %q, want %q", in, got, want)
		}
	}
	if got := RepositoryKey("file:///srv/repos/app.git"); got != "file:///srv/repos/app" {
		t.Errorf("file URL key: %q", got)
	}
	if got := RepositoryKey("https://git.example.com:8443/a/b.git"); got != "git.example.com:8443/a/b" {
		t.Errorf("non-default port lost: %q", got)
	}
}

func TestURLPolicy(t *testing.T) {
	p := &URLPolicy{AllowedSchemes: []string{"https", "ssh"}, AllowedHosts: []string{"github.com", "*.corp.example"}, DeniedHosts: []string{"secret.corp.example"}}
	for raw, ok := range map[string]bool{
		"https://github.com/org/r":              true,
		"ssh://git@git.corp.example/r":          true,
		"http://github.com/org/r":               false,
		"https://github.com.evil.example/r":     false,
		"https://corp.example/r":                false,
		"https://evilcorp.example/r":            false,
		"https://secret.corp.example/r":         false,
		"https://169.254.169.254/latest/meta":   false,
		"file:///etc/passwd":                    false,
		"https://a.corp.example./trailing-dot/": true,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.CheckURL(u); (err == nil) != ok {
			t.Errorf("CheckURL(%s) = %v, want allowed=%v", raw, err, ok)
		}
	}
	open := &URLPolicy{}
	for addr, ok := range map[string]bool{
		"169.254.169.254": false, "fe80::1": false, "fd00:ec2::254": false, "100.100.100.200": false,
		"0.0.0.0": false, "224.0.0.1": false, "::ffff:169.254.169.254": false,
		"127.0.0.1": true, "10.0.0.1": true, "140.82.112.3": true,
	} {
		if err := open.CheckAddr(netip.MustParseAddr(addr)); (err == nil) != ok {
			t.Errorf("CheckAddr(%s) = %v, want allowed=%v", addr, err, ok)
		}
	}
	strict := &URLPolicy{DenyLoopback: true, DenyPrivate: true}
	for _, addr := range []string{"127.0.0.1", "::1", "10.1.2.3", "192.168.1.1", "172.16.0.1", "fc00::1", "100.64.0.1"} {
		if strict.CheckAddr(netip.MustParseAddr(addr)) == nil {
			t.Errorf("strict policy allows %s", addr)
		}
	}
	var none *URLPolicy
	if none.CheckAddr(netip.MustParseAddr("169.254.169.254")) != nil {
		t.Error("a nil policy refuses")
	}
}

func TestProxyFuncAndNoProxy(t *testing.T) {
	c := &Credentials{Proxy: "http://proxy.example.com:3128", NoProxy: "internal.example.com, .corp, 10.0.0.0/8, 192.168.1.7, git.example.com:8443"}
	pf, err := c.ProxyFunc()
	if err != nil {
		t.Fatal(err)
	}
	for target, proxied := range map[string]bool{
		"https://github.com/org/repo":       true,
		"http://127.0.0.1:8080/charts":      true, // loopback is proxied unless listed
		"https://internal.example.com/x":    false,
		"https://a.internal.example.com/x":  false,
		"https://notinternal.example.com/x": true,
		"https://build.corp/x":              false,
		"https://10.1.2.3/x":                false,
		"https://192.168.1.7/x":             false,
		"https://192.168.1.8/x":             true,
		"https://git.example.com:8443/x":    false,
		"https://git.example.com/x":         true, // other port
	} {
		u, _ := url.Parse(target)
		got, err := pf(&http.Request{URL: u})
		if err != nil || (got != nil) != proxied {
			t.Errorf("%s: proxy %v (%v), want proxied %v", target, got, err, proxied)
		}
	}
	if pf, err := (&Credentials{}).ProxyFunc(); pf != nil || err != nil {
		t.Error("no proxy configured gave a proxy function")
	}
	if _, err := (&Credentials{Proxy: "socks5://u:SECRET@p"}).ProxyFunc(); err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("socks proxy: %v", err)
	}
}
