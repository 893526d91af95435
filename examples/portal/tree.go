package main

import (
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/resource"
)

// treeNode is one object of the resource tree.
type treeNode struct {
	Key             string     `json:"key"`
	Kind            string     `json:"kind"`
	Namespace       string     `json:"namespace,omitempty"`
	Name            string     `json:"name"`
	Sync            string     `json:"sync,omitempty"`
	Health          string     `json:"health,omitempty"`
	HealthMessage   string     `json:"healthMessage,omitempty"`
	RequiresPruning bool       `json:"requiresPruning,omitempty"`
	HasDiff         bool       `json:"hasDiff,omitempty"`
	Children        []treeNode `json:"children,omitempty"`
}

// maxTreeDepth and maxTreeNodes bound the tree of one app.
const (
	maxTreeDepth = 8
	maxTreeNodes = 2000
)

// appTree is the tree of an app's managed objects (from its status) with
// the live children the cache knows of each (owner references and inferred
// parents), and its hooks apart.
type appTree struct {
	Roots []treeNode `json:"roots"`
	Hooks []treeNode `json:"hooks"`
}

// cacheOf returns the engine's cache of the app's destination.
func (s *server) cacheOf(a *gitops.Application) (*cache.ClusterCache, bool) {
	if s.opts.Hooks == nil {
		return nil, false
	}
	for _, c := range s.opts.Clusters {
		if c.Config == nil {
			continue
		}
		d := a.Spec.Destination
		if (d.Server != "" && d.Server == c.Server) || (d.Name != "" && d.Name == c.Name) {
			return s.opts.Hooks.cacheFor(c.Config.Host)
		}
	}
	return nil, false
}

func (s *server) tree(a *gitops.Application, st gitops.Status) appTree {
	cc, _ := s.cacheOf(a)
	out := appTree{Roots: []treeNode{}, Hooks: []treeNode{}}
	budget := maxTreeNodes
	seen := map[resource.Key]bool{}
	for _, r := range st.Resources {
		n := nodeOf(r.Key)
		n.Sync = string(r.Status)
		n.RequiresPruning = r.RequiresPruning
		n.HasDiff = r.Diff != ""
		if r.Health != nil {
			n.Health, n.HealthMessage = string(r.Health.Code), r.Health.Message
		}
		seen[r.Key] = true
		if r.Hook {
			out.Hooks = append(out.Hooks, n)
			continue
		}
		if cc != nil {
			n.Children = s.children(cc, r.Key, 1, seen, &budget)
		}
		out.Roots = append(out.Roots, n)
	}
	return out
}

// children walks the cache's ownership edges below key, judging the
// health of each child with the portal's checker.
func (s *server) children(cc *cache.ClusterCache, key resource.Key, depth int, seen map[resource.Key]bool, budget *int) []treeNode {
	if depth > maxTreeDepth {
		return nil
	}
	var out []treeNode
	for _, k := range cc.Children(key) {
		if seen[k] || *budget <= 0 {
			continue
		}
		seen[k] = true
		*budget--
		n := nodeOf(k)
		if obj, ok := cc.Get(k); ok && s.opts.Health != nil {
			if h, err := s.opts.Health.Check(obj); err == nil && h != nil {
				n.Health, n.HealthMessage = string(h.Code), h.Message
			}
		}
		n.Children = s.children(cc, k, depth+1, seen, budget)
		out = append(out, n)
	}
	return out
}

func nodeOf(k resource.Key) treeNode {
	return treeNode{Key: k.String(), Kind: k.Kind, Namespace: k.Namespace, Name: k.Name}
}
