package shard

import (
	"fmt"
	"math"
	"testing"
)

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

func loads(a map[string]string) map[string]int {
	l := map[string]int{}
	for _, m := range a {
		l[m]++
	}
	return l
}

func TestAssignBoundsLoadAndCoversEveryKey(t *testing.T) {
	for _, tc := range []struct{ keys, members int }{{1, 1}, {10, 3}, {500, 3}, {1000, 7}, {3, 5}} {
		keys, members := names("app", tc.keys), names("replica", tc.members)
		a := Assign(keys, members, DefaultRingOptions())
		if len(a) != tc.keys {
			t.Fatalf("%v: %d of %d keys assigned", tc, len(a), tc.keys)
		}
		bound := int(math.Ceil(1.25 * float64(tc.keys) / float64(tc.members)))
		for m, n := range loads(a) {
			if n > bound {
				t.Errorf("%v: %s holds %d keys, bound %d", tc, m, n, bound)
			}
		}
	}
}

func TestAssignIsDeterministicAndOrderFree(t *testing.T) {
	keys, members := names("app", 200), []string{"c", "a", "b"}
	a := Assign(keys, members, DefaultRingOptions())
	reversed := append([]string(nil), keys...)
	for i, j := 0, len(reversed)-1; i < j; i, j = i+1, j-1 {
		reversed[i], reversed[j] = reversed[j], reversed[i]
	}
	b := Assign(append(reversed, "app-3"), []string{"b", "a", "c", "a"}, DefaultRingOptions())
	for k, m := range a {
		if b[k] != m {
			t.Fatalf("%s: %s then %s", k, m, b[k])
		}
	}
}

// A member leaving moves its own keys and only a few of the others'.
func TestAssignMovesFewKeysWhenAMemberLeaves(t *testing.T) {
	keys := names("app", 1000)
	before := Assign(keys, []string{"a", "b", "c"}, DefaultRingOptions())
	after := Assign(keys, []string{"a", "b"}, DefaultRingOptions())
	moved := 0
	for k, m := range before {
		if m != "c" && after[k] != m {
			moved++
		}
	}
	// Without the bound nothing else would move; with it some keys are
	// pushed along. Modulo hashing would move about two thirds.
	if moved > len(keys)/10 {
		t.Fatalf("%d keys of surviving members moved", moved)
	}
	t.Logf("%d of %d keys held by survivors moved", moved, len(keys))
}

func TestAssignWithoutMembers(t *testing.T) {
	if a := Assign([]string{"x"}, nil, DefaultRingOptions()); len(a) != 0 {
		t.Fatalf("assigned without members: %v", a)
	}
}

// BenchmarkAssign10kAppsOver10Replicas is what every replica pays on each
// change of members (and each reshard) for a large fleet.
func BenchmarkAssign10kAppsOver10Replicas(b *testing.B) {
	keys, members := names("app", 10000), names("replica", 10)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Assign(keys, members, DefaultRingOptions())
	}
}
