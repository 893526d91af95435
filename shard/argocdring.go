package shard

import (
	"encoding/binary"
	"math"
	"sort"
	"strconv"

	"golang.org/x/crypto/blake2b"
)

// argoRingPoints is the number of points each replica has on Argo CD's
// ring (its replication factor).
const argoRingPoints = 1000

// ConsistentHashingShards is Argo CD's consistent-hashing placement of
// clusters over replicas (controller.sharding.algorithm
// consistent-hashing), by cluster ID. The rules, which are Argo CD's:
//   - replica i ("0", "1", ...) has 1000 points on a 64-bit ring, at the
//     first 8 bytes (little endian) of the BLAKE2b-512 hash of the
//     replica's number followed by the point's (replica 1's tenth point is
//     "19"); where two points coincide the later replica keeps it;
//   - clusters are placed in the order of their ID, each on the first
//     point clockwise strictly after the hash of its ID whose replica's
//     load is below ceil(floor((total+1)/replicas) * 1.25) (at least
//     ceil(1.25), i.e. 2), passing the points of fuller replicas;
//   - a replica's load is the number of apps (appsByServer of the
//     cluster's Server) of the clusters placed on it so far, and total is
//     the sum of the loads.
//
// With replicas below 1 the answer is empty.
func ConsistentHashingShards(clusters []Cluster, appsByServer map[string]int64, replicas int) map[string]int {
	out := make(map[string]int, len(clusters))
	if replicas < 1 {
		return out
	}
	ring := newArgoRing(replicas)
	load := make([]int64, replicas)
	var total int64
	for _, c := range sortedByID(clusters) {
		r := ring.least(argoHash(c.ID), load, total)
		out[c.ID] = r
		// Argo CD adds the cluster's apps to the replica's load and sets
		// the ring's total from it.
		n := appsByServer[c.Server]
		load[r] += n
		total += n
	}
	return out
}

// argoRing is Argo CD's ring: sorted points and the replica of each.
type argoRing struct {
	points  []uint64
	replica map[uint64]int
}

func newArgoRing(replicas int) *argoRing {
	r := &argoRing{replica: make(map[uint64]int, replicas*argoRingPoints)}
	for i := range replicas {
		name := strconv.Itoa(i)
		for p := range argoRingPoints {
			h := argoHash(name + strconv.Itoa(p))
			if _, seen := r.replica[h]; !seen {
				r.points = append(r.points, h)
			}
			r.replica[h] = i
		}
	}
	sort.Slice(r.points, func(i, j int) bool { return r.points[i] < r.points[j] })
	return r
}

// least returns the replica of the first point after h whose load is
// below the bound, walking the ring at most once round (then the
// least-loaded replica, which Argo CD's bound never needs).
func (r *argoRing) least(h uint64, load []int64, total int64) int {
	avg := float64((total + 1) / int64(len(load)))
	if avg == 0 {
		avg = 1
	}
	bound := math.Ceil(avg * 1.25)
	i := sort.Search(len(r.points), func(i int) bool { return r.points[i] > h })
	for range r.points {
		if i == len(r.points) {
			i = 0
		}
		rep := r.replica[r.points[i]]
		if float64(load[rep]) < bound {
			return rep
		}
		i++
	}
	best := 0
	for rep := range load {
		if load[rep] < load[best] {
			best = rep
		}
	}
	return best
}

// argoHash is the ring's hash: the first 8 bytes, little endian, of the
// BLAKE2b-512 digest of s.
func argoHash(s string) uint64 {
	sum := blake2b.Sum512([]byte(s))
	return binary.LittleEndian.Uint64(sum[:8])
}
