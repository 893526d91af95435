package project

import (
	"errors"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// sourceRepos as Argo CD reads them: '/' separates, "**" crosses it, "!"
// denies, URLs compare without ".git" and case.
func TestSourcePermitted(t *testing.T) {
	const repo = "https://git.example/team-a/apps.git"
	for _, c := range []struct {
		patterns []string
		url      string
		want     bool
	}{
		{[]string{"*"}, repo, true},
		{[]string{"https://git.example/team-a/*"}, repo, true},
		{[]string{"https://git.example/*"}, repo, false},
		{[]string{"https://git.example/**"}, repo, true},
		{[]string{"https://git.example/team-?/apps"}, repo, true},
		{[]string{"https://git.example/team-[ab]/apps"}, repo, true},
		{[]string{"https://git.example/team-[!ab]/apps"}, repo, false},
		{[]string{"https://git.example/{team-a,team-b}/*"}, repo, true},
		{[]string{"HTTPS://GIT.EXAMPLE/team-a/apps"}, repo, true},
		{[]string{"https://git.example/team-a/apps.git"}, "https://git.example/team-a/apps", true},
		{[]string{"*", "!https://git.example/team-a/*"}, repo, false},
		{[]string{"*", "!https://git.example/team-b/*"}, repo, true},
		{[]string{"!https://git.example/team-b/*"}, repo, true}, // a deny pattern that does not match counts as a match, as in Argo CD
		{nil, repo, false},
	} {
		if got := SourcePermitted(c.patterns, c.url); got != c.want {
			t.Errorf("SourcePermitted(%q, %q) = %v, want %v", c.patterns, c.url, got, c.want)
		}
	}
	p := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{SourceRepos: []string{"https://git.example/**", "!https://git.example/secret/*"}}}
	p.Name = "team"
	var pe *PolicyError
	if err := CheckSource(p, "https://git.example/secret/keys.git"); !errors.As(err, &pe) || pe.Rule != "sourceRepos" {
		t.Errorf("a denied repository: %v", err)
	}
	if err := CheckSource(p, repo); err != nil {
		t.Errorf("an allowed repository: %v", err)
	}
}

// Globs without separators: classes and alternatives of gobwas/glob too.
func TestGlobClassesAndAlternatives(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"{dev,prod}-*", "prod-eu/x", true}, {"{dev,prod}-*", "test-eu", false},
		{"ns-[0-9]", "ns-7", true}, {"ns-[0-9]", "ns-x", false},
	} {
		if got := Glob(c.p, c.s); got != c.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
	}
}

// sourceNamespaces as Argo CD reads them: globs, and expressions between
// slashes that match anywhere unless anchored.
func TestNamespacePermitted(t *testing.T) {
	for _, c := range []struct {
		patterns []string
		ns       string
		want     bool
	}{
		{[]string{"*"}, "anything", true},
		{[]string{"team-*"}, "team-payments", true},
		{[]string{"team-*"}, "ops", false},
		{[]string{"/^team-[a-z]+$/"}, "team-payments", true},
		{[]string{"/^team-[a-z]+$/"}, "team-42", false},
		{[]string{"/pay/"}, "team-payments", true}, // unanchored, as regexp2's MatchString
		{[]string{"/^pay/"}, "team-payments", false},
		{[]string{"ops", "/^team-/"}, "team-a", true},
		{[]string{"/(?<=a)b/"}, "ab", false}, // RE2 cannot compile it: matches nothing (Validate refuses it)
		{[]string{"/"}, "/", true},           // one slash is a glob, not an expression
		{nil, "team-a", false},
	} {
		if got := NamespacePermitted(c.patterns, c.ns); got != c.want {
			t.Errorf("NamespacePermitted(%q, %q) = %v, want %v", c.patterns, c.ns, got, c.want)
		}
	}
	p := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{SourceNamespaces: []string{"/^team-[a-z]+$/"}}}
	p.Name = "team"
	if err := CheckSourceNamespace(p, "team-a", "argocd"); err != nil {
		t.Errorf("team-a: %v", err)
	}
	var pe *PolicyError
	if err := CheckSourceNamespace(p, "team-1", "argocd"); !errors.As(err, &pe) || pe.Rule != "sourceNamespaces" {
		t.Errorf("team-1: %v, want a sourceNamespaces PolicyError", err)
	}
}
