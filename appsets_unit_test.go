package gitops

import (
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/appset"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestRequeueAfterAndMaxUpdate(t *testing.T) {
	s := func(n int64) *int64 { return &n }
	gens := []appset.Generator{
		{Git: &appset.GitGenerator{RequeueAfterSeconds: s(300)}},
		{Matrix: &appset.MatrixGenerator{Generators: []appset.Generator{{List: &appset.ListGenerator{}},
			{PullRequest: &appset.PullRequestGenerator{RequeueAfterSeconds: s(60)}}}}},
	}
	if got := requeueAfter(gens); got != time.Minute {
		t.Fatalf("requeueAfter = %s, want the nested 60s", got)
	}
	if got := requeueAfter(gens[:1]); got != 5*time.Minute {
		t.Fatalf("requeueAfter = %s", got)
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
		if got, err := maxUpdate(tc.v, tc.n); err != nil || got != tc.want {
			t.Fatalf("maxUpdate(%v, %d) = %d, %v; want %d", tc.v, tc.n, got, err, tc.want)
		}
	}
	if _, err := maxUpdate(&intstr.IntOrString{Type: intstr.String, StrVal: "lots"}, 3); err == nil {
		t.Fatal("maxUpdate accepted lots")
	}
	step := appset.RollingSyncStep{MatchExpressions: []appset.MatchExpression{
		{Key: "env", Operator: "In", Values: []string{"dev", "qa"}}, {Key: "region", Operator: "NotIn", Values: []string{"us"}}}}
	for labels, want := range map[string]bool{"dev/kr": true, "qa/": true, "dev/us": false, "prod/kr": false} {
		env, region, _ := strings.Cut(labels, "/")
		l := map[string]string{"env": env}
		if region != "" {
			l["region"] = region
		}
		if got := stepSelects(step, l); got != want {
			t.Fatalf("stepSelects(%v) = %v", l, got)
		}
	}
}
