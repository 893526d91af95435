package git

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/source"
)

func TestResolveInRules(t *testing.T) {
	c := func(b byte) string {
		s := make([]byte, 40)
		for i := range s {
			s[i] = b
		}
		return string(s)
	}
	table := refTable{
		commits: map[string]string{
			"refs/heads/main":        c('a'),
			"refs/heads/v2":          c('b'), // a branch and a tag share a name
			"refs/tags/v2":           c('c'),
			"refs/tags/v1.0.0":       c('d'),
			"refs/tags/1.0.0":        c('d'),
			"refs/tags/v1.5.0-rc.1":  c('e'),
			"refs/tags/not-a-semver": c('f'),
			"refs/pull/7/head":       "abc123" + c('1')[6:],
			"refs/heads/abc1":        "abc199" + c('2')[6:],
		},
		head: c('a'), headRef: "refs/heads/main",
	}
	for rev, want := range map[string]source.Revision{
		"":                 {Commit: c('a'), Ref: "refs/heads/main"},
		"HEAD":             {Commit: c('a'), Ref: "refs/heads/main"},
		"v2":               {Commit: c('c'), Ref: "refs/tags/v2"}, // Git's precedence: tag before branch
		"heads/v2":         {Commit: c('b'), Ref: "refs/heads/v2"},
		"pull/7/head":      {Commit: "abc123" + c('1')[6:], Ref: "refs/pull/7/head"},
		"refs/pull/7/head": {Commit: "abc123" + c('1')[6:], Ref: "refs/pull/7/head"},
		"~1.0":             {Commit: c('d'), Ref: "refs/tags/1.0.0"}, // tie: lexically smaller name
		"~1.5.0-rc.0":      {Commit: c('e'), Ref: "refs/tags/v1.5.0-rc.1"},
		"abc1":             {Commit: "abc199" + c('2')[6:], Ref: "refs/heads/abc1"}, // a branch beats a short id
		"abc12":            {Commit: "abc123" + c('1')[6:]},
		c('F'):             {Commit: c('f')},
	} {
		got, err := resolveIn(table, rev, "")
		if err != nil || got != want {
			t.Errorf("resolveIn(%q) = %v, %v; want %v", rev, got, err, want)
		}
	}
	if _, err := resolveIn(table, "abc", ""); !errors.Is(err, source.ErrRevisionNotFound) {
		t.Errorf("3-digit short id: %v, want not found", err)
	}
	table.commits["refs/heads/x"] = "abc123" + c('9')[6:]
	if _, err := resolveIn(table, "abc12", ""); !errors.Is(err, source.ErrAmbiguousRevision) {
		t.Errorf("ambiguous short id: %v, want ErrAmbiguousRevision", err)
	}
	if _, err := resolveIn(table, ">=3", ""); !errors.Is(err, source.ErrRevisionNotFound) {
		t.Errorf("unsatisfiable constraint: %v", err)
	}
	if _, err := resolveIn(refTable{commits: map[string]string{}}, "HEAD", ""); !errors.Is(err, source.ErrRevisionNotFound) {
		t.Errorf("HEAD of an empty table: %v", err)
	}
}

// TestResolveInTagPrefix is Argo CD's tagPrefix table
// (docs/user-guide/tracking_strategies.md): tags are filtered by the
// prefix, the prefix is stripped before the constraint is evaluated and
// put back on the tag chosen; an exact version names prefix+version; a
// branch resolves as without a prefix.
func TestResolveInTagPrefix(t *testing.T) {
	c := func(b byte) string { return strings.Repeat(string(b), 40) }
	table := refTable{
		commits: map[string]string{
			"refs/heads/main":                     c('a'),
			"refs/tags/app1/v1.0.0":               c('b'),
			"refs/tags/app1/v1.0.1":               c('c'),
			"refs/tags/app2/v1.0.0":               c('d'),
			"refs/tags/app2/v2.0.0":               c('e'),
			"refs/tags/app1/cluster1/prod/v1.0.0": c('f'),
			"refs/tags/v9.0.0":                    c('9'), // no prefix: never a match
			"refs/tags/app1/v1.1.0-rc.1":          c('1'),
		},
		head: c('a'), headRef: "refs/heads/main",
	}
	for _, tc := range []struct {
		prefix, rev string
		want        source.Revision
	}{
		{"app1/", "v1.0.*", source.Revision{Commit: c('c'), Ref: "refs/tags/app1/v1.0.1"}},
		{"app2/", "v1.*", source.Revision{Commit: c('d'), Ref: "refs/tags/app2/v1.0.0"}},
		{"app1/cluster1/prod/", "v1.*", source.Revision{Commit: c('f'), Ref: "refs/tags/app1/cluster1/prod/v1.0.0"}},
		{"app1/", ">=v1.0.0-0", source.Revision{Commit: c('1'), Ref: "refs/tags/app1/v1.1.0-rc.1"}},
		{"app1/", "v1.0.0", source.Revision{Commit: c('b'), Ref: "refs/tags/app1/v1.0.0"}},
		{"app1/", "main", source.Revision{Commit: c('a'), Ref: "refs/heads/main"}},
		{"app1/", "HEAD", source.Revision{Commit: c('a'), Ref: "refs/heads/main"}},
	} {
		got, err := resolveIn(table, tc.rev, tc.prefix)
		if err != nil || got != tc.want {
			t.Errorf("resolveIn(%q, prefix %q) = %v, %v; want %v", tc.rev, tc.prefix, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ prefix, rev string }{{"app2/", "v3.*"}, {"app3/", "*"}, {"app1/", "v1.0.7"}} {
		_, err := resolveIn(table, tc.rev, tc.prefix)
		if !errors.Is(err, source.ErrRevisionNotFound) || !strings.Contains(err.Error(), strconv.Quote(tc.prefix)) || !strings.Contains(err.Error(), tc.rev) {
			t.Errorf("resolveIn(%q, prefix %q): %v; want not found naming the prefix and the revision", tc.rev, tc.prefix, err)
		}
	}
}
