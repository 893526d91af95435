package engine

import (
	"context"
	"slices"
	"testing"

	"k8s.io/client-go/rest"
)

// SetClusters keeps an unchanged cluster's state, replaces one whose
// token changed, removes one no longer listed, and reports both by name.
func TestSetClustersReplacesOnlyChanged(t *testing.T) {
	cfg := func(tok string) *rest.Config { return &rest.Config{Host: "https://a:6443", BearerToken: tok} }
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{
		{Name: "a", Server: "https://a:6443", Config: cfg("one")},
		{Name: "b", Server: "https://b:6443", Config: &rest.Config{Host: "https://b:6443", BearerToken: "b"}},
		{Name: "c", Server: "https://c:6443"},
	}
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// at is the cluster known as k (a name or a server URL), or nil.
	at := func(k string) *clusterState {
		cs, err := e.destination(ApplicationDestination{Name: k})
		if err != nil {
			cs, _ = e.destination(ApplicationDestination{Server: k})
		}
		return cs
	}
	before := map[string]*clusterState{}
	for _, k := range []string{"a", "b", "c", "https://a:6443", "https://b:6443", "https://c:6443"} {
		before[k] = at(k)
	}
	next := []ClusterConfig{
		{Name: "a", Server: "https://a:6443", Config: cfg("two")},
		{Name: "b", Server: "https://b:6443", Config: &rest.Config{Host: "https://b:6443", BearerToken: "b"}},
	}
	changed, err := e.Settings().SetClusters(context.Background(), next)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "c", "https://a:6443", "https://c:6443"}; !slices.Equal(changed, want) {
		t.Errorf("changed %v, want %v", changed, want)
	}
	if at("b") != before["b"] || at("https://b:6443") != before["b"] {
		t.Error("the unchanged cluster b was replaced")
	}
	if at("a") == before["a"] || at("a").Config().Config.BearerToken != "two" {
		t.Error("cluster a keeps its old connection after its token changed")
	}
	if at("c") != nil {
		t.Error("cluster c is still configured")
	}
	// The same list again changes nothing.
	if changed, err := e.Settings().SetClusters(context.Background(), next); err != nil || len(changed) != 0 {
		t.Errorf("second SetClusters: %v %v", changed, err)
	}
	if _, err := e.Settings().SetClusters(context.Background(), append(next, ClusterConfig{Name: "a", Server: "https://x"})); err == nil {
		t.Error("two clusters named a were accepted")
	}
	if at("a").Config().Config.BearerToken != "two" {
		t.Error("a refused SetClusters changed the clusters")
	}
}
