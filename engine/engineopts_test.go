package engine

import (
	"context"
	"reflect"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// TestTemplatesHoldSettingsOnly: Options.Sync and Options.Cache have no
// field for what the engine gives each cluster's syncers and cache (the
// mistake New once refused with an OwnedFieldError, a template setting
// Tracking or Health the engine then overwrote, can no longer be written),
// and the settings a host sets reach every cluster's cache and syncer as
// set, beside the engine's collaborators.
func TestTemplatesHoldSettingsOnly(t *testing.T) {
	for typ, fields := range map[reflect.Type][]string{
		reflect.TypeFor[sync.Options]():  {"Tracking", "Health", "ManagedObjects", "Live", "Admit", "InSync", "Log"},
		reflect.TypeFor[cache.Options](): {"Tracking", "Populate", "SkipUpdate", "Logger", "Registerer"},
	} {
		for _, f := range fields {
			if _, ok := typ.FieldByName(f); ok {
				t.Errorf("%s has a field %s: a collaborator the engine gives can be set as a setting", typ, f)
			}
		}
	}

	var (
		gotSync      sync.Options
		gotSyncWith  sync.Collaborators
		gotCache     cache.Options
		gotCacheWith cache.Collaborators
	)
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{{Name: "local", Config: cluster.Config()}}
	opts.Tracking = resource.TrackingArgoCD()
	opts.Sync.FieldManager, opts.Sync.WaveTimeout = "host-manager", time.Minute
	opts.Cache.PageSize = 77
	opts.NewClusterCache = func(cfg *rest.Config, o cache.Options, w cache.Collaborators) (ClusterCache, error) {
		gotCache, gotCacheWith = o, w
		return defaultNewClusterCache(cfg, o, w)
	}
	opts.NewSyncer = func(cfg *rest.Config, o sync.Options, w sync.Collaborators) (Syncer, error) {
		gotSync, gotSyncWith = o, w
		return defaultNewSyncer(cfg, o, w)
	}
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.cluster(context.Background(), ApplicationDestination{Name: "local"}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotSync, opts.Sync) {
		t.Errorf("the syncer's settings are not the host's:\n got %+v\nwant %+v", gotSync, opts.Sync)
	}
	if gotCache.PageSize != 77 || gotCache.Name != "local" || !gotCache.KeepManagedFields {
		t.Errorf("the cache's settings: page size %d, name %q, keep managed fields %v", gotCache.PageSize, gotCache.Name, gotCache.KeepManagedFields)
	}
	if gotSyncWith.Tracking != opts.Tracking || gotSyncWith.Health == nil || gotSyncWith.ManagedObjects == nil || gotSyncWith.Live == nil {
		t.Errorf("the syncer's collaborators: %+v", gotSyncWith)
	}
	if gotCacheWith.Tracking != opts.Tracking || gotCacheWith.Populate == nil {
		t.Errorf("the cache's collaborators: %+v", gotCacheWith)
	}
}

// TestQPSReachesEveryClusterClient: the default limit, a host's own, and a
// negative QPS that turns the client-side limit off (as in client-go), each
// reach the syncer's client as set; the negative one is not replaced by
// the default.
func TestQPSReachesEveryClusterClient(t *testing.T) {
	for _, tc := range []struct {
		qps       float32
		burst     int
		wantQPS   float32
		wantBurst int
	}{
		{0, 0, 200, 400},
		{50, 100, 50, 100},
		{-1, 0, -1, 0},
	} {
		var got *rest.Config
		opts := DefaultOptions()
		opts.QPS, opts.Burst = tc.qps, tc.burst
		opts.Clusters = []ClusterConfig{{Name: "local", Config: cluster.Config()}}
		opts.NewSyncer = func(cfg *rest.Config, o sync.Options, w sync.Collaborators) (Syncer, error) {
			got = cfg
			return defaultNewSyncer(cfg, o, w)
		}
		e, err := newWithBuiltins(opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.cluster(context.Background(), ApplicationDestination{Name: "local"}); err != nil {
			e.Close()
			t.Fatal(err)
		}
		e.Close()
		if got == nil {
			t.Fatalf("Options.QPS %v: no syncer was made", tc.qps)
		}
		if got.QPS != tc.wantQPS || got.Burst != tc.wantBurst {
			t.Errorf("Options.QPS %v, Burst %d: the syncer's client got QPS %v, Burst %d, want %v, %d", tc.qps, tc.burst, got.QPS, got.Burst, tc.wantQPS, tc.wantBurst)
		}
	}
}
