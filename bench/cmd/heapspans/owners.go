package main

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// ownerQuery selects the sampled objects whose owners -owners prints.
type ownerQuery struct {
	// match selects by allocation stack (any frame); nil selects all.
	// An owner is then an object whose stack it does not match; without
	// it, one allocated at another site.
	match *regexp.Regexp
	// class selects by size class; 0 for all.
	class uint64
	// bySite groups by the objects' own allocation site.
	bySite bool
}

// maxOwnerDepth bounds the walk from an object up to its owner.
const maxOwnerDepth = 40

// runOwners prints, for the sampled objects q selects, who keeps them:
// walking the pointers that lead to each (breadth first), the allocation
// site of the nearest sampled object that is not of the same kind (see
// ownerQuery.match), "a root" when only roots lead there. The dump must be written with
// allocation samples (GODEBUG=memprofilerate=N, N a few KiB, samples
// enough objects to name most owners).
func runOwners(path string, out io.Writer, q ownerQuery) error {
	d, err := loadDump(path, true)
	if err != nil {
		return err
	}
	parents := make([][]int32, len(d.objects))
	for i, o := range d.objects {
		for _, p := range o.ptrs {
			if j := d.find(p); j >= 0 && j != i {
				parents[j] = append(parents[j], int32(i))
			}
		}
	}
	rooted := map[int]bool{}
	for _, p := range d.roots {
		if j := d.find(p); j >= 0 {
			rooted[j] = true
		}
	}
	stackOf := func(i int) []string {
		if b, ok := d.samples[d.objects[i].addr]; ok {
			return d.stacks[b]
		}
		return nil
	}
	matches := func(stack []string) bool { return q.match == nil || q.match.MatchString(strings.Join(stack, "\n")) }
	type group struct {
		objects int
		bytes   uint64
	}
	groups := map[string]*group{}
	selected := 0
	for i, o := range d.objects {
		stack := stackOf(i)
		if stack == nil || !matches(stack) || q.class != 0 && o.size != q.class {
			continue
		}
		selected++
		name := site(stack)
		if !q.bySite {
			own := name
			name = ownerOf(i, parents, rooted, func(k int) ([]string, bool) {
				s := stackOf(k)
				if s == nil {
					return nil, false
				}
				if q.match != nil {
					return s, !matches(s)
				}
				return s, site(s) != own
			})
		}
		g, ok := groups[name]
		if !ok {
			g = &group{}
			groups[name] = g
		}
		g.objects++
		g.bytes += o.size
	}
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return groups[names[i]].objects > groups[names[j]].objects })
	fmt.Fprintf(out, "%d sampled objects selected (%d objects, %d samples in the dump)\n", selected, len(d.objects), len(d.samples))
	fmt.Fprintf(out, "%8s %10s  %s\n", "sampled", "bytes", "owner's allocation site")
	for i, n := range names {
		if i == 30 {
			break
		}
		fmt.Fprintf(out, "%8d %10d  %s\n", groups[n].objects, groups[n].bytes, n)
	}
	return nil
}

// ownerOf walks up from object i to the nearest object owner accepts and
// names its allocation site.
func ownerOf(i int, parents [][]int32, rooted map[int]bool, owner func(int) ([]string, bool)) string {
	seen := map[int]bool{i: true}
	level := []int{i}
	reachesRoot := false
	for range maxOwnerDepth {
		var next []int
		for _, k := range level {
			if k != i {
				if stack, ok := owner(k); ok {
					return site(stack)
				}
			}
			reachesRoot = reachesRoot || rooted[k]
			for _, p := range parents[k] {
				if !seen[int(p)] {
					seen[int(p)] = true
					next = append(next, int(p))
				}
			}
		}
		if len(next) == 0 {
			break
		}
		level = next
	}
	if reachesRoot {
		return "a root"
	}
	return "no sampled owner"
}

// site names an allocation stack by its first frames of this module (or
// of the program), else its first frames outside the runtime.
func site(stack []string) string {
	var out []string
	for _, f := range stack {
		if strings.Contains(f, "kubegitops/gitops") || strings.HasPrefix(f, "main.") {
			out = append(out, strings.TrimPrefix(f, "github.com/kubegitops/gitops/"))
		}
		if len(out) == 4 {
			break
		}
	}
	if len(out) == 0 {
		for _, f := range stack {
			if !strings.HasPrefix(f, "runtime.") && !strings.HasPrefix(f, "internal/") {
				out = append(out, f)
			}
			if len(out) == 4 {
				break
			}
		}
	}
	return strings.Join(out, " < ")
}
