package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/cache/store/redisstore"
	"github.com/kubegitops/gitops/internal/redistest"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/plain"
	"github.com/kubegitops/gitops/shard"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// countingRenderer counts the renders that were not served from the store.
type countingRenderer struct {
	next  *plain.Renderer
	count *atomic.Int64
}

func (c countingRenderer) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	c.count.Add(1)
	return c.next.Render(ctx, in)
}

func (c countingRenderer) Identity(in render.Input) (render.Identity, error) {
	return c.next.Identity(in)
}

// shardedReplica is one engine of the group, with its own metrics.
type shardedReplica struct {
	e    *Engine
	reg  *prometheus.Registry
	stop context.CancelFunc
	done chan struct{}
}

// reconciles returns how often the replica refreshed each app.
func (r *shardedReplica) reconciles(t *testing.T) map[string]uint64 {
	t.Helper()
	mfs, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, mf := range mfs {
		if mf.GetName() != "gitops_reconcile_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "app" {
					out[l.GetValue()] = uint64(m.GetCounter().GetValue())
				}
			}
		}
	}
	return out
}

// workedOn returns, per app, the replicas that reconciled it between two
// snapshots.
func workedOn(before, after []map[string]uint64) map[string][]int {
	out := map[string][]int{}
	for i := range after {
		for app, n := range after[i] {
			if n > before[i][app] {
				out[app] = append(out[app], i)
			}
		}
	}
	return out
}

// Three engines share 12 apps through Leases: each app is reconciled by
// exactly one replica; a stopped replica's apps are taken over within a
// deadline; renders are shared through Redis, so no app is rendered twice.
func TestShardedReplicasOwnAppsExclusivelyAndTakeOver(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	// The test is about sharing renders, not about a slow Redis: a
	// generous timeout keeps a loaded CI machine from tripping the
	// store's cooldown, in which every app renders again each second
	// (store/redis_hung_test.go covers that path).
	ropts := redisstore.DefaultOptions()
	ropts.Timeout = 10 * time.Second
	shared := redisstore.New(rdb, ropts)
	var renders atomic.Int64

	files := map[string]string{}
	var apps []*Application
	for i := 0; i < 12; i++ {
		files[fmt.Sprintf("app%d/cm.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\ndata: {i: \"%d\"}\n", i, i)
	}
	dir := repoDir(t, files)
	for i := 0; i < 12; i++ {
		a := automated(dirApp(fmt.Sprintf("%s-%d", ns, i), dir, ns))
		a.Spec.Source.Path = fmt.Sprintf("app%d", i)
		apps = append(apps, a)
	}

	replicas := make([]*shardedReplica, 3)
	for i := range replicas {
		sopts := shard.DefaultOptions()
		sopts.Namespace, sopts.Group, sopts.Identity = ns, "engines", fmt.Sprintf("replica-%d", i)
		sopts.LeaseDuration, sopts.RenewDeadline, sopts.RetryPeriod = 6*time.Second, 4*time.Second, 500*time.Millisecond
		m, err := shard.New(cluster.Config(), sopts)
		if err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		e := newEngine(t, func(o *Options) {
			o.Interval = time.Second
			o.Sharder = m
			o.Registerer = reg
			o.RenderStore = shared
			o.Renderers = map[render.Kind]render.Renderer{render.KindPlain: countingRenderer{plain.New(plain.DefaultOptions()), &renders}}
		})
		ctx, cancel := context.WithCancel(context.Background())
		r := &shardedReplica{e: e, reg: reg, stop: cancel, done: make(chan struct{})}
		vals := make([]Application, len(apps))
		for j, a := range apps {
			vals[j] = *a
		}
		go func() { defer close(r.done); _ = e.Run(ctx, vals) }()
		t.Cleanup(func() { cancel(); <-r.done })
		replicas[i] = r
	}

	snapshot := func(rs []*shardedReplica) []map[string]uint64 {
		out := make([]map[string]uint64, len(rs))
		for i, r := range rs {
			out[i] = r.reconciles(t)
		}
		return out
	}
	// exclusive waits until every app has been reconciled since a fresh
	// snapshot, then checks that in that window each app was reconciled
	// by exactly one replica, and returns which.
	exclusive := func(rs []*shardedReplica, deadline time.Duration) map[string]int {
		t.Helper()
		var before []map[string]uint64
		var last map[string][]int
		// Ownership settles first (joins wait a grace of two read periods).
		eventually(t, deadline, "every app owned by one replica", func() bool {
			owners := map[string]int{}
			for _, r := range rs {
				for _, key := range r.e.Apps().ManagedApps() {
					owners[key.Name]++
				}
			}
			for _, a := range apps {
				if owners[a.Name] != 1 {
					return false
				}
			}
			return true
		})
		// A refresh a former owner began before the handover may end
		// after it: let every app be reconciled once (a window that is
		// not judged), so the judged window starts after any such one.
		settle := snapshot(rs)
		eventually(t, deadline, "every app reconciled since ownership settled", func() bool {
			return len(workedOn(settle, snapshot(rs))) == len(apps)
		})
		before = snapshot(rs)
		eventually(t, deadline, "every app reconciled again", func() bool {
			last = workedOn(before, snapshot(rs))
			return len(last) == len(apps)
		})
		owner := map[string]int{}
		for app, who := range last {
			if len(who) != 1 {
				t.Fatalf("%s reconciled by replicas %v in one window", app, who)
			}
			owner[app] = who[0]
		}
		return owner
	}

	// Every replica has joined and taken apps (under load a join can come
	// after the first two have split the apps between them).
	eventually(t, time.Minute, "every replica owns apps", func() bool {
		for _, r := range replicas {
			if len(r.e.Apps().ManagedApps()) == 0 {
				return false
			}
		}
		return true
	})
	owner := exclusive(replicas, time.Minute)
	per := map[int]int{}
	for _, i := range owner {
		per[i]++
	}
	if len(per) != 3 {
		t.Fatalf("not every replica has apps: %v", per)
	}
	// Each app's status is known to its owner only.
	for _, a := range apps {
		for i, r := range replicas {
			if _, ok := r.e.Apps().AppStatus(v1alpha1.KeyOf(a)); ok != (owner[a.Name] == i) {
				eventually(t, 30*time.Second, "status only at the owner", func() bool {
					_, ok := r.e.Apps().AppStatus(v1alpha1.KeyOf(a))
					return ok == (owner[a.Name] == i)
				})
			}
		}
	}
	eventually(t, time.Minute, "all apps synced", func() bool {
		for _, a := range apps {
			st, _ := replicas[owner[a.Name]].e.Apps().AppStatus(v1alpha1.KeyOf(a))
			if st.Sync != appstatus.Synced {
				return false
			}
		}
		return true
	})

	// Stop replica 2: its Lease is released and the others take its apps.
	stopped := time.Now()
	replicas[2].stop()
	<-replicas[2].done
	survivors := replicas[:2]
	after := exclusive(survivors, 30*time.Second)
	t.Logf("takeover of %d apps within %v", per[2], time.Since(stopped))
	// Bounded loads may move a few apps between survivors (one spilled
	// past a full replica goes home once the bound rises), never most.
	moved := 0
	for app, was := range owner {
		if was != 2 && after[app] != was {
			moved++
		}
	}
	if moved > len(apps)/4 {
		t.Errorf("%d apps moved between surviving replicas", moved)
	}
	eventually(t, time.Minute, "taken-over apps synced at their new owners", func() bool {
		for _, a := range apps {
			st, ok := survivors[after[a.Name]].e.Apps().AppStatus(v1alpha1.KeyOf(a))
			if !ok || st.Sync != appstatus.Synced {
				return false
			}
		}
		return true
	})
	// Every app was rendered once by the whole group: a replica taking
	// an app over read its manifests from Redis.
	if n := renders.Load(); n != int64(len(apps)) {
		t.Fatalf("%d renders for %d apps: renders are not shared", n, len(apps))
	}
}
