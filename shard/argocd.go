package shard

import (
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
)

// Argo CD's application controller algorithms, the values of
// argocd-cmd-params-cm controller.sharding.algorithm
// ($ARGOCD_CONTROLLER_SHARDING_ALGORITHM).
const (
	// AlgorithmLegacy places a cluster by the FNV-32a hash of its ID
	// modulo the replicas (Argo CD's default).
	AlgorithmLegacy = "legacy"
	// AlgorithmRoundRobin places the clusters sorted by ID in turn.
	AlgorithmRoundRobin = "round-robin"
	// AlgorithmConsistentHashing places the clusters by consistent hashing
	// with bounded loads, weighed by their apps.
	AlgorithmConsistentHashing = "consistent-hashing"
)

// Cluster is a destination cluster as Argo CD's placement sees it.
type Cluster struct {
	// ID is the cluster Secret's UID; "" for the in-cluster destination
	// that has no Secret.
	ID string
	// Server is the cluster's server URL, the key of ClusterShards' answer.
	Server string
	// Shard is the Secret's shard field, which pins the cluster to that
	// replica when it is below the replica count; nil when absent.
	Shard *int
}

// ClusterShards returns the replica (0 to replicas-1) of each cluster, by
// server, as Argo CD's application controller places them. The rules:
//   - with replicas below 2 every cluster is replica 0's (Argo CD then
//     runs unsharded);
//   - a Shard below replicas pins the cluster there; a Shard at or above
//     it puts the cluster on replica 0 (Argo CD's cluster cache does so,
//     with a warning);
//   - otherwise algorithm decides: AlgorithmLegacy is
//     FNV-32a(ID) mod replicas, with an empty ID (in-cluster) on 0;
//     AlgorithmRoundRobin is the cluster's rank among all clusters sorted
//     by ID, mod replicas; AlgorithmConsistentHashing is
//     ConsistentHashingShards. Any other value is AlgorithmLegacy, as in
//     Argo CD.
//
// appsByServer counts the apps whose destination.server is each server;
// only AlgorithmConsistentHashing reads it.
func ClusterShards(algorithm string, clusters []Cluster, appsByServer map[string]int64, replicas int) map[string]int {
	out := make(map[string]int, len(clusters))
	if replicas < 2 {
		for _, c := range clusters {
			out[c.Server] = 0
		}
		return out
	}
	var byHash map[string]int
	sorted := sortedByID(clusters)
	rank := make(map[string]int, len(sorted))
	for i, c := range sorted {
		rank[c.ID] = i
	}
	if algorithm == AlgorithmConsistentHashing {
		byHash = ConsistentHashingShards(sorted, appsByServer, replicas)
	}
	for _, c := range clusters {
		switch {
		case c.Shard != nil && *c.Shard >= 0 && *c.Shard < replicas:
			out[c.Server] = *c.Shard
		case c.Shard != nil:
			out[c.Server] = 0
		case algorithm == AlgorithmRoundRobin:
			out[c.Server] = rank[c.ID] % replicas
		case algorithm == AlgorithmConsistentHashing:
			out[c.Server] = byHash[c.ID]
		default:
			out[c.Server] = LegacyShard(c.ID, replicas)
		}
	}
	return out
}

// LegacyShard is Argo CD's legacy placement of a cluster of this ID:
// FNV-32a of the ID modulo replicas; an empty ID (the in-cluster
// destination without a Secret) and replicas below 2 give 0.
func LegacyShard(id string, replicas int) int {
	if id == "" || replicas < 2 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % uint32(replicas))
}

// sortedByID returns the clusters sorted by ID (a copy).
func sortedByID(clusters []Cluster) []Cluster {
	out := append([]Cluster(nil), clusters...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ShardFromName returns the replica number a StatefulSet Pod's name
// carries, its last "-"-separated part (argocd-application-controller-2
// is 2), as Argo CD infers it from the host name; ok is false when that
// part is not a number.
func ShardFromName(name string) (n int, ok bool) {
	i := strings.LastIndex(name, "-")
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}
