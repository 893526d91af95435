package git

import (
	"errors"
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
		got, err := resolveIn(table, rev)
		if err != nil || got != want {
			t.Errorf("resolveIn(%q) = %v, %v; want %v", rev, got, err, want)
		}
	}
	if _, err := resolveIn(table, "abc"); !errors.Is(err, source.ErrRevisionNotFound) {
		t.Errorf("3-digit short id: %v, want not found", err)
	}
	table.commits["refs/heads/x"] = "abc123" + c('9')[6:]
	if _, err := resolveIn(table, "abc12"); !errors.Is(err, source.ErrAmbiguousRevision) {
		t.Errorf("ambiguous short id: %v, want ErrAmbiguousRevision", err)
	}
	if _, err := resolveIn(table, ">=3"); !errors.Is(err, source.ErrRevisionNotFound) {
		t.Errorf("unsatisfiable constraint: %v", err)
	}
	if _, err := resolveIn(refTable{commits: map[string]string{}}, "HEAD"); !errors.Is(err, source.ErrRevisionNotFound) {
		t.Errorf("HEAD of an empty table: %v", err)
	}
}
