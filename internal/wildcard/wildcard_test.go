package wildcard

import (
	"testing"

	"github.com/gobwas/glob"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "https://a.example.com:6443/x", true},
		{"https://*.example.com", "https://prod.eu.example.com", true},
		{"https://*.example.com", "https://example.org", false},
		{"https://10.0.0.?:6443", "https://10.0.0.7:6443", true},
		{"https://10.0.0.?:6443", "https://10.0.0.17:6443", false},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"", "", true},
		{"", "x", false},
		{"team-[ab]", "team-a", true},
		{"team-[ab]", "team-c", false},
		{"team-[!ab]", "team-c", true},
		{"team-[a-c]", "team-b", true},
		{"{dev,prod}-*", "prod-eu", true},
		{"{dev,prod}-*", "test-eu", false},
		{`a\*b`, "a*b", true},
		{`a\*b`, "axb", false},
		{"[", "[", false}, // does not compile: matches nothing
	}
	for _, c := range cases {
		if got := Match(c.pattern, c.s); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
	if !Any([]string{"x", "y*"}, "yes") || Any(nil, "x") {
		t.Error("Any")
	}
}

// With '/' as a separator (Argo CD's sourceRepos), "*" and "?" stay within
// one path segment and "**" crosses them.
func TestMatchSeparators(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"https://git.example/org/*", "https://git.example/org/repo", true},
		{"https://git.example/org/*", "https://git.example/org/team/repo", false},
		{"https://git.example/org/**", "https://git.example/org/team/repo", true},
		{"https://git.example/org?repo", "https://git.example/org/repo", false},
		{"https://git.example/{org,other}/*", "https://git.example/other/repo", true},
	}
	for _, c := range cases {
		if got := Match(c.pattern, c.s, '/'); got != c.want {
			t.Errorf("Match(%q, %q, '/') = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
	if !Match("https://git.example/org/*", "https://git.example/org/team/repo") {
		t.Error("without separators * should cross '/'")
	}
}

func TestMatchNegatable(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "anything", true},
		{"!kube-system", "default", true},
		{"!kube-system", "kube-system", false},
		{"!kube-*", "kube-public", false},
		{"!kube-*", "web", true},
		{"team-*", "team-a", true},
	}
	for _, c := range cases {
		if got := MatchNegatable(c.pattern, c.s); got != c.want {
			t.Errorf("MatchNegatable(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
	if !IsDeny("!x") || IsDeny("x") {
		t.Error("IsDeny")
	}
	if _, err := Compile("[", '/'); err == nil {
		t.Error("Compile accepted an unclosed class")
	}
	g, err := Compile("lit")
	if err != nil || !g.Match("lit") || g.Match("li") {
		t.Errorf("literal compile: %v", err)
	}
}

// The allow-all patterns take a path without gobwas' compiler; they must
// mean what the compiled pattern means.
func TestStarPatternsMatchAsCompiled(t *testing.T) {
	for _, s := range []string{"", "a", "a/b", "a.b", "/", "a/b/c"} {
		for _, seps := range [][]rune{nil, {'/'}, {'.'}, {'/', '.'}} {
			for _, p := range []string{"*", "**"} {
				g, err := glob.Compile(p, seps...)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := Match(p, s, seps...), g.Match(s); got != want {
					t.Errorf("Match(%q, %q, %q) = %v, compiled %v", p, s, string(seps), got, want)
				}
			}
		}
	}
}
