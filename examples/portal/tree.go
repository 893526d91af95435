package main

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/resource"
)

// treeNode is one object of the resource tree.
type treeNode struct {
	Key             string `json:"key"`
	Kind            string `json:"kind"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name"`
	Sync            string `json:"sync,omitempty"`
	Health          string `json:"health,omitempty"`
	HealthMessage   string `json:"healthMessage,omitempty"`
	RequiresPruning bool   `json:"requiresPruning,omitempty"`
	HasDiff         bool   `json:"hasDiff,omitempty"`
	// AppLink is the page of the app an Application node is (app of
	// apps), when this portal serves an app of that name (appLinkOf).
	AppLink  string     `json:"appLink,omitempty"`
	Children []treeNode `json:"children,omitempty"`
}

// maxTreeDepth bounds the depth of an app's tree (the engine's tree
// bounds its nodes).
const maxTreeDepth = 8

// appTree is the tree of an app's managed objects (from its status) with
// their live descendants, and its hooks apart.
type appTree struct {
	Roots []treeNode `json:"roots"`
	Hooks []treeNode `json:"hooks"`
}

// liveTree is the engine's resource tree of an app (Engine.ResourceTree:
// owner references and inferred parents from the engine's cluster cache,
// each descendant's health judged by the engine's checker as the cache
// saw it change), indexed for the walk.
type liveTree struct {
	children map[resource.Key][]resource.Key
	nodes    map[resource.Key]v1alpha1.ResourceNode
}

func keyOfRef(r v1alpha1.ResourceRef) resource.Key {
	return resource.Key{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// liveTreeOf asks the engine for a's tree; an app whose cluster cannot be
// reached gets its managed objects alone.
func (s *server) liveTreeOf(ctx context.Context, a *gitops.Application) liveTree {
	lt := liveTree{children: map[resource.Key][]resource.Key{}, nodes: map[resource.Key]v1alpha1.ResourceNode{}}
	ctx, cancel := context.WithTimeout(ctx, kubeTimeout)
	defer cancel()
	t, err := s.appTreeOf(ctx, a)
	if err != nil || t == nil {
		return lt
	}
	for _, n := range t.Nodes {
		k := keyOfRef(n.ResourceRef)
		lt.nodes[k] = n
		for _, p := range n.ParentRefs {
			pk := keyOfRef(p)
			lt.children[pk] = append(lt.children[pk], k)
		}
	}
	return lt
}

func (s *server) tree(ctx context.Context, a *gitops.Application, st appstatus.Status) appTree {
	lt := s.liveTreeOf(ctx, a)
	out := appTree{Roots: []treeNode{}, Hooks: []treeNode{}}
	seen := map[resource.Key]bool{}
	for _, r := range st.Resources {
		seen[r.Key] = true
	}
	for _, r := range st.Resources {
		n := nodeOf(r.Key)
		n.AppLink = s.appLinkOf(a, r.Key)
		n.Sync = string(r.Status)
		n.RequiresPruning = r.RequiresPruning
		n.HasDiff = r.Diff != ""
		if r.Health != nil {
			n.Health, n.HealthMessage = string(r.Health.Code), r.Health.Message
		}
		if r.Hook {
			out.Hooks = append(out.Hooks, n)
			continue
		}
		n.Children = lt.below(r.Key, 1, seen)
		out.Roots = append(out.Roots, n)
	}
	slices.SortStableFunc(out.Roots, func(x, y treeNode) int { return strings.Compare(x.Key, y.Key) })
	return out
}

// below returns the descendants of key, each once.
func (lt liveTree) below(key resource.Key, depth int, seen map[resource.Key]bool) []treeNode {
	if depth > maxTreeDepth {
		return nil
	}
	var out []treeNode
	for _, k := range lt.children[key] {
		if seen[k] {
			continue
		}
		seen[k] = true
		n := nodeOf(k)
		if h := lt.nodes[k].Health; h != nil {
			n.Health, n.HealthMessage = h.Status, h.Message
		}
		n.Children = lt.below(k, depth+1, seen)
		out = append(out, n)
	}
	return out
}

func nodeOf(k resource.Key) treeNode {
	return treeNode{Key: k.String(), Kind: k.Kind, Namespace: k.Namespace, Name: k.Name}
}

// appLinkOf is the page of the app that k, a managed object of a, is: an
// Argo CD Application (an app of apps) named as an app this portal
// serves, other than a itself; else "". The page asks for "applications,
// get" on that app as any page does.
func (s *server) appLinkOf(a *gitops.Application, k resource.Key) string {
	if k.Group != v1alpha1.SchemeGroupVersion.Group || k.Kind != v1alpha1.ApplicationKind || k.Name == a.Name {
		return ""
	}
	if _, ok := s.app(k.Name); !ok {
		return ""
	}
	return "/apps/" + url.PathEscape(k.Name)
}
