package main

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/rbac"
	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// netNode is one object of the network view.
type netNode struct {
	Key    string `json:"key"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Health string `json:"health,omitempty"`
	// Layer is the view's column: 0 Ingress, 1 Service, 2 Pod.
	Layer int `json:"layer"`
}

// netEdge is traffic from one object to another.
type netEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// netView is an app's network view: its Ingresses, Services and Pods,
// with Ingress -> Service edges from the Ingresses' backends and Service
// -> Pod edges from the Services' selectors.
type netView struct {
	Nodes []netNode `json:"nodes"`
	Edges []netEdge `json:"edges"`
}

var (
	ingressGK = [2]string{"networking.k8s.io", "Ingress"}
	serviceGK = [2]string{"", "Service"}
	podGK     = [2]string{"", "Pod"}
)

func gkOf(k resource.Key) [2]string { return [2]string{k.Group, k.Kind} }

// apiNetwork answers the app's network view (netView). The objects are
// the app's, from the engine's tree; the Ingresses and Services are read
// whole through Engine.LiveObject, and a Service's Pods are those of the
// app its selector matches (listed through the API server by that
// selector).
func (s *server) apiNetwork(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet)
	if err != nil {
		deny(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), kubeTimeout)
	defer cancel()
	writeJSON(w, http.StatusOK, s.network(ctx, a))
}

func (s *server) network(ctx context.Context, a *gitops.Application) netView {
	st, _ := s.appStatus(a)
	lt := s.liveTreeOf(ctx, a)
	health := map[resource.Key]string{}
	var keys []resource.Key
	add := func(k resource.Key, h string) {
		if _, ok := health[k]; !ok {
			keys = append(keys, k)
		}
		if h != "" || health[k] == "" {
			health[k] = h
		}
	}
	for _, rs := range st.Resources {
		if g := gkOf(rs.Key); !rs.Hook && (g == ingressGK || g == serviceGK || g == podGK) {
			h := ""
			if rs.Health != nil {
				h = string(rs.Health.Code)
			}
			add(rs.Key, h)
		}
	}
	for k, n := range lt.nodes {
		if g := gkOf(k); g == ingressGK || g == serviceGK || g == podGK {
			h := ""
			if n.Health != nil {
				h = n.Health.Status
			}
			add(k, h)
		}
	}
	slices.SortFunc(keys, func(x, y resource.Key) int { return strings.Compare(x.String(), y.String()) })
	v := netView{Nodes: []netNode{}, Edges: []netEdge{}}
	pods := map[resource.Key]bool{}
	for _, k := range keys {
		layer := map[[2]string]int{ingressGK: 0, serviceGK: 1, podGK: 2}[gkOf(k)]
		v.Nodes = append(v.Nodes, netNode{Key: k.String(), Kind: k.Kind, Name: k.Name, Health: health[k], Layer: layer})
		if layer == 2 {
			pods[k] = true
		}
	}
	for _, k := range keys {
		switch gkOf(k) {
		case ingressGK:
			v.Edges = append(v.Edges, s.ingressEdges(ctx, a, k)...)
		case serviceGK:
			v.Edges = append(v.Edges, s.serviceEdges(ctx, a, k, pods)...)
		}
	}
	return v
}

// ingressEdges are k's edges to the Services of its default backend and
// rules.
func (s *server) ingressEdges(ctx context.Context, a *gitops.Application, k resource.Key) []netEdge {
	live, err := s.opts.Engine.LiveObject(ctx, a, k)
	if err != nil || live == nil {
		return nil
	}
	var names []string
	if n, ok, _ := unstructured.NestedString(live.Object, "spec", "defaultBackend", "service", "name"); ok {
		names = append(names, n)
	}
	rules, _, _ := unstructured.NestedSlice(live.Object, "spec", "rules")
	for _, r := range rules {
		rm, _ := r.(map[string]any)
		paths, _, _ := unstructured.NestedSlice(rm, "http", "paths")
		for _, p := range paths {
			pm, _ := p.(map[string]any)
			if n, ok, _ := unstructured.NestedString(pm, "backend", "service", "name"); ok {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	var out []netEdge
	for _, n := range slices.Compact(names) {
		svc := resource.Key{Kind: "Service", Namespace: k.Namespace, Name: n}
		out = append(out, netEdge{From: k.String(), To: svc.String()})
	}
	return out
}

// serviceEdges are k's edges to the app's Pods its selector matches. A
// Service without a selector (its endpoints set by hand) has none.
func (s *server) serviceEdges(ctx context.Context, a *gitops.Application, k resource.Key, pods map[resource.Key]bool) []netEdge {
	if s.opts.Kube == nil || len(pods) == 0 {
		return nil
	}
	live, err := s.opts.Engine.LiveObject(ctx, a, k)
	if err != nil || live == nil {
		return nil
	}
	sel, _, _ := unstructured.NestedStringMap(live.Object, "spec", "selector")
	if len(sel) == 0 {
		return nil
	}
	list, err := s.opts.Kube.CoreV1().Pods(k.Namespace).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sel).String()})
	if err != nil {
		return nil
	}
	var out []netEdge
	for _, p := range list.Items {
		pk := resource.Key{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
		if pods[pk] {
			out = append(out, netEdge{From: k.String(), To: pk.String()})
		}
	}
	return out
}
