package shard

import (
	"hash/fnv"
	"math"
	"sort"
	"strconv"
)

// RingOptions shape the consistent-hash ring.
type RingOptions struct {
	// VirtualNodes is the number of points each member has on the ring;
	// more points spread keys more evenly. Default 100.
	VirtualNodes int
	// LoadFactor bounds each member's load at LoadFactor times the mean
	// (rounded up). Default 1.25; values below 1 are raised to 1.
	LoadFactor float64
}

// DefaultRingOptions returns 100 virtual nodes and a load factor of 1.25.
func DefaultRingOptions() RingOptions {
	return RingOptions{VirtualNodes: 100, LoadFactor: 1.25}
}

// Assign maps each key to one member by consistent hashing with bounded
// loads (Mirrokni, Thorup and Zadimoghaddam, 2018). The rules:
//   - every member has VirtualNodes points on a 64-bit ring, at the hash
//     of "member#i";
//   - no member takes more than ceil(LoadFactor * len(keys) / len(members))
//     keys;
//   - keys are placed in the order of their hash (ties by key), each on
//     the first member clockwise from its own hash that is below the
//     bound;
//   - the result depends only on the sets of keys and members, not on
//     their order or on who computes it, so replicas that see the same
//     members agree without talking to each other;
//   - a member joining or leaving moves the keys it takes or gives up and
//     only a few others (those pushed along by the bound).
//
// With no members every key is unassigned (absent from the map).
// Duplicate keys or members count once.
func Assign(keys, members []string, opts RingOptions) map[string]string {
	d := DefaultRingOptions()
	if opts.VirtualNodes <= 0 {
		opts.VirtualNodes = d.VirtualNodes
	}
	if opts.LoadFactor <= 0 {
		opts.LoadFactor = d.LoadFactor
	}
	opts.LoadFactor = math.Max(opts.LoadFactor, 1)
	members = uniqueSorted(members)
	keys = uniqueSorted(keys)
	out := make(map[string]string, len(keys))
	if len(members) == 0 {
		return out
	}
	ring := newRing(members, opts.VirtualNodes)
	bound := int(math.Ceil(opts.LoadFactor * float64(len(keys)) / float64(len(members))))
	load := make(map[string]int, len(members))
	type hashed struct {
		key string
		h   uint64
	}
	order := make([]hashed, len(keys))
	for i, k := range keys {
		order[i] = hashed{k, hash64(k)}
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].h != order[j].h {
			return order[i].h < order[j].h
		}
		return order[i].key < order[j].key
	})
	for _, k := range order {
		i := sort.Search(len(ring), func(i int) bool { return ring[i].h >= k.h })
		for n := 0; n < len(ring); n++ {
			p := ring[(i+n)%len(ring)]
			if load[p.member] < bound {
				load[p.member]++
				out[k.key] = p.member
				break
			}
		}
	}
	return out
}

type point struct {
	h      uint64
	member string
}

func newRing(members []string, vnodes int) []point {
	ring := make([]point, 0, len(members)*vnodes)
	for _, m := range members {
		for i := 0; i < vnodes; i++ {
			ring = append(ring, point{hash64(m + "#" + strconv.Itoa(i)), m})
		}
	}
	sort.Slice(ring, func(i, j int) bool {
		if ring[i].h != ring[j].h {
			return ring[i].h < ring[j].h
		}
		return ring[i].member < ring[j].member
	})
	return ring
}

// hash64 is FNV-1a followed by a 64-bit finaliser: FNV alone clusters
// similar strings ("app-1", "app-2") on the ring; the mixer spreads them.
func hash64(s string) uint64 {
	f := fnv.New64a()
	_, _ = f.Write([]byte(s))
	x := f.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func uniqueSorted(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	n := 0
	for i, s := range out {
		if i == 0 || s != out[n-1] {
			out[n] = s
			n++
		}
	}
	return out[:n]
}
