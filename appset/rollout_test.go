package appset

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestRequeueAfterAndMaxUpdate(t *testing.T) {
	s := func(n int64) *int64 { return &n }
	gens := []Generator{
		{Git: &GitGenerator{RepoURL: "https://git.example/a.git", RequeueAfterSeconds: s(300)}},
		{Matrix: &MatrixGenerator{Generators: []Generator{{List: &ListGenerator{}},
			{PullRequest: &PullRequestGenerator{RequeueAfterSeconds: s(60)}}}}},
		{Merge: &MergeGenerator{Generators: []Generator{{Git: &GitGenerator{RepoURL: "https://git.example/b.git"}}}}},
	}
	if got := RequeueAfter(gens); got != time.Minute {
		t.Fatalf("RequeueAfter = %s, want the nested 60s", got)
	}
	if got := RequeueAfter(gens[:1]); got != 5*time.Minute {
		t.Fatalf("RequeueAfter = %s", got)
	}
	if got := RequeueAfter(gens[2:]); got != 0 {
		t.Fatalf("RequeueAfter = %s, want 0 (none set)", got)
	}
	if got := GitRepos(gens); !slices.Equal(got, []string{"https://git.example/a.git", "https://git.example/b.git"}) {
		t.Fatalf("GitRepos = %v", got)
	}
	for _, tc := range []struct {
		v    *intstr.IntOrString
		n    int
		want int
	}{
		{nil, 7, 7},
		{&intstr.IntOrString{Type: intstr.Int, IntVal: 2}, 7, 2},
		{&intstr.IntOrString{Type: intstr.String, StrVal: "50%"}, 7, 3},
		{&intstr.IntOrString{Type: intstr.String, StrVal: "10%"}, 3, 1},
		{&intstr.IntOrString{Type: intstr.Int, IntVal: 0}, 3, 0},
	} {
		if got, err := MaxUpdate(tc.v, tc.n); err != nil || got != tc.want {
			t.Fatalf("MaxUpdate(%v, %d) = %d, %v; want %d", tc.v, tc.n, got, err, tc.want)
		}
	}
	if _, err := MaxUpdate(&intstr.IntOrString{Type: intstr.String, StrVal: "lots"}, 3); err == nil {
		t.Fatal("MaxUpdate accepted lots")
	}
	if _, err := MaxUpdate(&intstr.IntOrString{Type: intstr.Int, IntVal: -1}, 3); err == nil {
		t.Fatal("MaxUpdate accepted -1")
	}
	step := RollingSyncStep{MatchExpressions: []MatchExpression{
		{Key: "env", Operator: "In", Values: []string{"dev", "qa"}}, {Key: "region", Operator: "NotIn", Values: []string{"us"}}}}
	for labels, want := range map[string]bool{"dev/kr": true, "qa/": true, "dev/us": false, "prod/kr": false} {
		env, region, _ := strings.Cut(labels, "/")
		l := map[string]string{"env": env}
		if region != "" {
			l["region"] = region
		}
		if got := StepSelects(step, l); got != want {
			t.Fatalf("StepSelects(%v) = %v", l, got)
		}
	}
}
