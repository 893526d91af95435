package shard

import (
	"fmt"
	"strconv"
	"testing"
)

// idClusters returns clusters of these IDs, each of server "s-<id>".
func idClusters(ids ...string) []Cluster {
	out := make([]Cluster, len(ids))
	for i, id := range ids {
		out[i] = Cluster{ID: id, Server: "s-" + id}
	}
	return out
}

// shardsOf returns the shards of ids' servers in an answer as a string of
// digits.
func shardsOf(got map[string]int, ids ...string) string {
	s := ""
	for _, id := range ids {
		n, ok := got["s-"+id]
		if !ok {
			return "missing " + id
		}
		s += strconv.Itoa(n)
	}
	return s
}

// The figures are Argo CD's own test expectations
// (controller/sharding/sharding_test.go, clusters of IDs "1" to "5").
func TestClusterShardsLegacyAndRoundRobinAsArgoCD(t *testing.T) {
	ids := []string{"1", "2", "3", "4", "5"}
	for _, tc := range []struct {
		algorithm string
		replicas  int
		ids       []string
		want      string
	}{
		{AlgorithmLegacy, 5, ids[:4], "4122"},     // TestLegacyGetClusterFilterWithFixedShard
		{AlgorithmLegacy, 1, ids[:4], "0000"},     // TestGetShardByID_NotEmptyID
		{AlgorithmRoundRobin, 2, ids[:4], "0101"}, // TestGetClusterFilterDefault
		{AlgorithmRoundRobin, 2, ids, "01010"},    // TestGetShardByIndexModuloReplicasCountDistributionFunction2
		{AlgorithmRoundRobin, 3, ids, "01201"},
		{AlgorithmRoundRobin, 4, ids[:4], "0123"}, // TestRoundRobinGetClusterFilterWithFixedShard
		{AlgorithmRoundRobin, 1, ids, "00000"},
		{"unknown", 5, ids[:4], "4122"}, // any other value is legacy
	} {
		got := ClusterShards(tc.algorithm, idClusters(ids...), nil, tc.replicas)
		if s := shardsOf(got, tc.ids...); s != tc.want {
			t.Errorf("%s over %d replicas: %s, want %s", tc.algorithm, tc.replicas, s, tc.want)
		}
	}
}

// The in-cluster destination without a Secret (ID "") is replica 0's
// under legacy and round-robin, and comes first in round-robin's order.
func TestClusterShardsInCluster(t *testing.T) {
	cs := append([]Cluster{{Server: "https://kubernetes.default.svc"}}, idClusters("1", "2")...)
	for _, alg := range []string{AlgorithmLegacy, AlgorithmRoundRobin} {
		got := ClusterShards(alg, cs, nil, 2)
		if got["https://kubernetes.default.svc"] != 0 {
			t.Errorf("%s: in-cluster on %d", alg, got["https://kubernetes.default.svc"])
		}
	}
	if s := shardsOf(ClusterShards(AlgorithmRoundRobin, cs, nil, 2), "1", "2"); s != "10" {
		t.Errorf("round-robin after in-cluster: %s, want 10", s)
	}
}

// A shard field below the replica count pins the cluster; one at or above
// it puts the cluster on replica 0, as Argo CD's cluster cache does.
func TestClusterShardsPinned(t *testing.T) {
	one, nine := 1, 9
	for _, alg := range []string{AlgorithmLegacy, AlgorithmRoundRobin, AlgorithmConsistentHashing} {
		cs := idClusters("1", "2", "3", "4")
		cs[0].Shard = &one  // legacy 4 mod 2 = 0 unpinned
		cs[1].Shard = &nine // beyond the replicas
		got := ClusterShards(alg, cs, nil, 2)
		if got["s-1"] != 1 || got["s-2"] != 0 {
			t.Errorf("%s: pinned 1 on %d, pinned 9 on %d; want 1 and 0", alg, got["s-1"], got["s-2"])
		}
	}
}

// The figures were computed by Argo CD's own consistent package
// (controller/sharding/consistent, GetLeast and UpdateLoad driven as
// createConsistentHashingWithBoundLoads drives them): 133 clusters of IDs
// "000000" to "000132" without apps, as in
// TestConsistentHashingWhenClusterIsAddedAndRemoved, and 12 clusters
// weighed by their apps.
func TestConsistentHashingShardsAsArgoCD(t *testing.T) {
	var ids []string
	for i := range 133 {
		ids = append(ids, fmt.Sprintf("%06d", i))
	}
	for _, tc := range []struct {
		replicas int
		want     string
	}{
		{3, "0202222012201220220201002121010201011000221002122101102022010220121021111111210122112210001212220112000011211000212002201212011100112"},
		{2, "0000000010001010110001001111010001011000111000111101101001010110101011111111110111111010001010100110000011111000110001001111011100110"},
	} {
		got := ClusterShards(AlgorithmConsistentHashing, idClusters(ids...), nil, tc.replicas)
		if s := shardsOf(got, ids...); s != tc.want {
			t.Errorf("133 clusters over %d replicas:\n got %s\nwant %s", tc.replicas, s, tc.want)
		}
	}
	var weighed []Cluster
	var wids []string
	apps := map[string]int64{}
	for i := range 12 {
		id := fmt.Sprintf("uid-%02d", i)
		wids = append(wids, id)
		weighed = append(weighed, Cluster{ID: id, Server: "s-" + id})
		apps["s-"+id] = int64((i*7)%5 + 1)
	}
	for replicas, want := range map[int]string{2: "001101001011", 3: "001221020021", 4: "001322023301"} {
		got := ClusterShards(AlgorithmConsistentHashing, weighed, apps, replicas)
		if s := shardsOf(got, wids...); s != want {
			t.Errorf("12 weighed clusters over %d replicas: %s, want %s", replicas, s, want)
		}
	}
}

// Going from 3 replicas to 2 moves only replica 2's clusters (Argo CD's
// TestConsistentHashingWhenClusterIsAddedAndRemoved).
func TestConsistentHashingShardsMovesOnlyTheGoneReplicas(t *testing.T) {
	var ids []string
	for i := range 133 {
		ids = append(ids, fmt.Sprintf("%06d", i))
	}
	three := ClusterShards(AlgorithmConsistentHashing, idClusters(ids...), nil, 3)
	two := ClusterShards(AlgorithmConsistentHashing, idClusters(ids...), nil, 2)
	for s, was := range three {
		if was != 2 && two[s] != was {
			t.Errorf("%s moved from %d to %d", s, was, two[s])
		}
	}
}

func TestShardFromName(t *testing.T) {
	for name, want := range map[string]int{"argocd-application-controller-2": 2, "gitops-operator-0": 0, "x-13": 13} {
		if n, ok := ShardFromName(name); !ok || n != want {
			t.Errorf("%s: %d %v, want %d", name, n, ok, want)
		}
	}
	for _, name := range []string{"argocd-application-controller", "host", ""} {
		if n, ok := ShardFromName(name); ok {
			t.Errorf("%s: %d, want no number", name, n)
		}
	}
}
