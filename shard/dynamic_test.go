package shard

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHeartbeatFromEnv(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 10 * time.Second, "x": 10 * time.Second, "9": 10 * time.Second,
		"10": 10 * time.Second, "25": 25 * time.Second, "60": time.Minute, "61": 10 * time.Second, "-20": 10 * time.Second} {
		if got := HeartbeatFromEnv(v); got != want {
			t.Errorf("HeartbeatFromEnv(%q) = %v, want %v", v, got, want)
		}
	}
}

// claimNames lists the claims' controller names by number.
func claimNames(c []ShardClaim) []string {
	out := make([]string, len(c))
	for i, x := range c {
		out[x.ShardNumber] = x.ControllerName
		if x.ShardNumber != i {
			out[i] = "misplaced"
		}
	}
	return out
}

func TestClaimShard(t *testing.T) {
	now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	timeout := 30 * time.Second
	fresh, old := metav1.NewTime(now.Add(-5*time.Second)), metav1.NewTime(now.Add(-31*time.Second))
	two := []ShardClaim{{0, "a", fresh}, {1, "b", fresh}}
	cases := []struct {
		name      string
		claims    []ShardClaim
		self      string
		replicas  int
		requested int
		shard     int
		held      string
		after     []string
	}{
		{"first replica on an empty mapping", nil, "a", 2, -1, 0, "", []string{"a", ""}},
		{"renews its own claim", two, "b", 2, -1, 1, "", []string{"a", "b"}},
		{"scale up adds an entry, new replica takes it", two, "c", 3, -1, 2, "", []string{"a", "b", "c"}},
		{"all held: none", two, "c", 2, -1, -1, "", []string{"a", "b"}},
		{"stale claim taken over", []ShardClaim{{0, "a", fresh}, {1, "b", old}}, "c", 2, -1, 1, "", []string{"a", "c"}},
		{"scale down resets every claim", []ShardClaim{{0, "a", fresh}, {1, "b", fresh}, {2, "c", fresh}}, "c", 2, -1, 0, "", []string{"c", ""}},
		{"requested number free", []ShardClaim{{0, "a", fresh}, {1, "", metav1.Time{}}}, "c", 2, 1, 1, "", []string{"a", "c"}},
		{"requested number held fresh by another", two, "c", 2, 1, -1, "b", []string{"a", "b"}},
		{"requested number held stale", []ShardClaim{{0, "a", fresh}, {1, "b", old}}, "c", 2, 1, 1, "", []string{"a", "c"}},
		{"requested number at the count: as unset", []ShardClaim{{0, "a", fresh}, {1, "", metav1.Time{}}}, "c", 2, 2, 1, "", []string{"a", "c"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := append([]ShardClaim(nil), c.claims...)
			r := ClaimShard(in, c.self, c.replicas, c.requested, now, timeout)
			if r.Shard != c.shard || r.HeldBy != c.held {
				t.Errorf("shard %d held by %q, want %d held by %q", r.Shard, r.HeldBy, c.shard, c.held)
			}
			if got := claimNames(r.Claims); len(got) != len(c.after) || fmtList(got) != fmtList(c.after) {
				t.Errorf("claims %q, want %q", got, c.after)
			}
			if r.Shard >= 0 && !r.Claims[r.Shard].HeartbeatTime.Time.Equal(now) {
				t.Errorf("claim %d not renewed: %v", r.Shard, r.Claims[r.Shard].HeartbeatTime)
			}
		})
	}
}

func fmtList(s []string) string {
	out := ""
	for _, x := range s {
		out += x + ","
	}
	return out
}

func TestClaimsOf(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: ShardConfigMapName}}
	if claims, err := ClaimsOf(cm); err != nil || claims != nil {
		t.Fatalf("no mapping: %v, %v; want none", claims, err)
	}
	cm.Data = map[string]string{ShardMappingKey: `[{"ShardNumber":1,"ControllerName":"c-1","HeartbeatTime":"2026-12-07T10:00:00Z"}]`}
	claims, err := ClaimsOf(cm)
	if err != nil || len(claims) != 1 || claims[0].ShardNumber != 1 || claims[0].ControllerName != "c-1" || claims[0].HeartbeatTime.IsZero() {
		t.Fatalf("ClaimsOf = %+v, %v", claims, err)
	}
	cm.Data[ShardMappingKey] = "{not a list"
	if _, err := ClaimsOf(cm); err == nil || !strings.Contains(err.Error(), "ConfigMap argocd/"+ShardConfigMapName+" key "+ShardMappingKey) {
		t.Fatalf("a bad mapping: %v; want an error naming the ConfigMap and key", err)
	}
}
