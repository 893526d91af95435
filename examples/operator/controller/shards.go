package controller

import (
	"context"
	"fmt"
	"sort"
	"strings"
	gosync "sync"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/shard"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// AnnotationOwner names the replica that reconciles an Application when
// the operator runs as several replicas sharing the apps
// (Options.Sharder): each owner writes its name there when it takes the
// app, so `kubectl get applications -o yaml` and `gitopsctl shards` show
// who works on what. It is package shard's annotation.
const AnnotationOwner = shard.AnnotationOwner

// ownership is the reconciler's view of which Applications this replica
// owns under Options.Sharder. Apps are named "namespace/name" to the
// Sharder, so every replica hashes the same keys.
type ownership struct {
	mu    gosync.Mutex
	owned map[string]bool // nil until the first reshard: nothing owned
	// gained and lost count the apps this replica took and gave up.
	gained, lost uint64
}

// ShardStats are what this replica owns under Options.Sharder.
type ShardStats struct {
	// Owned is the number of Applications this replica owns now.
	Owned int
	// Gained and Lost count, since it started, the Applications it took
	// and those it no longer owns (moved to another replica or deleted).
	Gained, Lost uint64
}

// ShardStats returns what this replica owns (zero without a Sharder).
func (r *Reconciler) ShardStats() ShardStats {
	r.shards.mu.Lock()
	defer r.shards.mu.Unlock()
	return ShardStats{Owned: len(r.shards.owned), Gained: r.shards.gained, Lost: r.shards.lost}
}

// claim writes AnnotationOwner on an app this replica owns when it names
// another replica (or none); app is updated from the response.
func (r *Reconciler) claim(ctx context.Context, app *v1alpha1.Application) error {
	if r.opts.Sharder == nil || app.Annotations[AnnotationOwner] == r.opts.Identity {
		return nil
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, AnnotationOwner, r.opts.Identity))
	if err := r.client.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("application %s: write owner annotation: %w", nameOf(app), err)
	}
	r.remember(app)
	return nil
}

// owns reports whether this replica reconciles the app; without a
// Sharder every app is its own.
func (r *Reconciler) owns(key types.NamespacedName) bool {
	if r.opts.Sharder == nil {
		return true
	}
	r.shards.mu.Lock()
	defer r.shards.mu.Unlock()
	return r.shards.owned[key.String()]
}

// followShards adds the runnable that keeps r's ownership current.
func (r *Reconciler) followShards(mgr manager.Manager) error {
	return mgr.Add(&shardRunnable{r: r, mgr: mgr})
}

// shardRunnable is the manager runnable that asks the Sharder which apps
// are this replica's whenever membership or the set of Applications
// changes. It runs on every replica (not only the elected one).
type shardRunnable struct {
	r   *Reconciler
	mgr manager.Manager
}

// NeedLeaderElection is false: every replica follows its own share.
func (s *shardRunnable) NeedLeaderElection() bool { return false }

// Start reshards at start, on every change the Sharder reports and every
// time an Application appears or goes, until ctx ends.
func (s *shardRunnable) Start(ctx context.Context) error {
	inf, err := s.mgr.GetCache().GetInformer(ctx, &v1alpha1.Application{})
	if err != nil {
		return fmt.Errorf("shards: %w", err)
	}
	appsChanged := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case appsChanged <- struct{}{}:
		default:
		}
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: poke, DeleteFunc: poke})
	if err != nil {
		return fmt.Errorf("shards: %w", err)
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	if !s.mgr.GetCache().WaitForCacheSync(ctx) {
		return nil
	}
	for {
		s.r.reshard(ctx, s.mgr.GetCache())
		select {
		case <-ctx.Done():
			return nil
		case <-s.r.opts.Sharder.Changes():
		case <-appsChanged:
		}
	}
}

// reshard asks the Sharder which of the served Applications are this
// replica's: apps gained are queued at once, apps lost are no longer
// reconciled here (a reconcile in flight finishes) and what this replica
// remembered of them is dropped, since their new owner reports them. Both
// are logged by name.
func (r *Reconciler) reshard(ctx context.Context, reader client.Reader) {
	var list v1alpha1.ApplicationList
	if err := reader.List(ctx, &list); err != nil {
		r.opts.Log.Error(err, "shards: cannot list Applications")
		return
	}
	all := make([]string, 0, len(list.Items))
	for i := range list.Items {
		all = append(all, client.ObjectKeyFromObject(&list.Items[i]).String())
	}
	owned := r.opts.Sharder.Owned(all)
	r.shards.mu.Lock()
	prev := r.shards.owned
	r.shards.owned = owned
	var gained, lost []string
	for k := range owned {
		if !prev[k] {
			gained = append(gained, k)
		}
	}
	for k := range prev {
		if !owned[k] {
			lost = append(lost, k)
		}
	}
	r.shards.gained += uint64(len(gained))
	r.shards.lost += uint64(len(lost))
	r.shards.mu.Unlock()
	if len(lost) > 0 {
		logApps(r.opts.Log, "apps lost by sharding", lost, len(owned))
		for _, k := range lost {
			r.resumeChecked.Delete(k)
			if ns, name, ok := strings.Cut(k, "/"); ok {
				r.forget(types.NamespacedName{Namespace: ns, Name: name})
			}
		}
	}
	if len(gained) > 0 {
		logApps(r.opts.Log, "apps gained by sharding", gained, len(owned))
		for _, k := range gained {
			if ns, name, ok := strings.Cut(k, "/"); ok && r.opts.Events != nil {
				r.opts.Events.Requeue(types.NamespacedName{Namespace: ns, Name: name})
			}
		}
	}
}

// maxLoggedApps bounds the names one gain or loss line carries.
const maxLoggedApps = 50

// logApps logs a change of ownership with the apps' names (sorted, the
// first maxLoggedApps of them and how many more).
func logApps(log logr.Logger, msg string, apps []string, owned int) {
	sort.Strings(apps)
	names := apps
	more := 0
	if len(names) > maxLoggedApps {
		names, more = names[:maxLoggedApps], len(names)-maxLoggedApps
	}
	kv := []any{"count", len(apps), "apps", strings.Join(names, ",")}
	if more > 0 {
		kv = append(kv, "more", more)
	}
	log.Info(msg, append(kv, "owned", owned)...)
}
