package appset

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// StepSelects reports whether an Application's labels match every
// matchExpression of a RollingSync step (In: the label is set to one of
// the values; NotIn: it is not), as Argo CD's progressive sync selects
// the Applications of a step.
func StepSelects(step RollingSyncStep, labels map[string]string) bool {
	for _, m := range step.MatchExpressions {
		v, has := labels[m.Key]
		in := has && slices.Contains(m.Values, v)
		if (m.Operator == "In") != in {
			return false
		}
	}
	return true
}

// MaxUpdate is how many of a step's n Applications may update at once: v
// as a number, or as a percentage of n rounded down but at least one
// (for a percentage above zero); all n when v is nil. A negative number
// or a malformed percentage is an error.
func MaxUpdate(v *intstr.IntOrString, n int) (int, error) {
	if v == nil {
		return n, nil
	}
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return 0, fmt.Errorf("negative")
		}
		return int(v.IntVal), nil
	}
	pct, err := intstr.GetScaledValueFromIntOrPercent(v, 100, false)
	if err != nil {
		return 0, err
	}
	k := pct * n / 100
	if k < 1 && pct > 0 {
		k = 1
	}
	return k, nil
}

// RequeueAfter is the shortest requeueAfterSeconds of a set's generators,
// nested ones in matrix and merge included (0: none set): the set is
// generated again at least that often.
func RequeueAfter(gens []Generator) time.Duration {
	var least time.Duration
	take := func(d time.Duration) {
		if d > 0 && (least == 0 || d < least) {
			least = d
		}
	}
	secs := func(s *int64) time.Duration {
		if s == nil || *s <= 0 {
			return 0
		}
		return time.Duration(*s) * time.Second
	}
	for _, g := range gens {
		switch {
		case g.Git != nil:
			take(secs(g.Git.RequeueAfterSeconds))
		case g.SCMProvider != nil:
			take(secs(g.SCMProvider.RequeueAfterSeconds))
		case g.PullRequest != nil:
			take(secs(g.PullRequest.RequeueAfterSeconds))
		case g.ClusterDecisionResource != nil:
			take(secs(g.ClusterDecisionResource.RequeueAfterSeconds))
		case g.Plugin != nil:
			take(secs(g.Plugin.RequeueAfterSeconds))
		case g.Matrix != nil:
			take(RequeueAfter(g.Matrix.Generators))
		case g.Merge != nil:
			take(RequeueAfter(g.Merge.Generators))
		}
	}
	return least
}

// GitRepos lists the repositories of a set's git generators, nested ones
// in matrix and merge included.
func GitRepos(gens []Generator) []string {
	var out []string
	for _, g := range gens {
		switch {
		case g.Git != nil:
			out = append(out, g.Git.RepoURL)
		case g.Matrix != nil:
			out = append(out, GitRepos(g.Matrix.Generators)...)
		case g.Merge != nil:
			out = append(out, GitRepos(g.Merge.Generators)...)
		}
	}
	return out
}
