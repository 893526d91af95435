package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/hooks"
	"github.com/kubegitops/gitops/project"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// differEntry is a Differ built for one app's ignore rules and options,
// kept while they do not change (compiling jq rules is not free).
type differEntry struct {
	key    string
	differ Differ
	// memo is the app's last comparison with this differ (refreshMemo).
	memo *refreshMemo
}

// differFor returns the app's Differ for its destination cs: the cluster's
// schema models the kinds client-go has no model for.
func (e *Engine) differFor(app *Application, cs *clusterState) (Differ, error) {
	opts := diff.DefaultOptions()
	opts.Tracking = e.opts.Tracking
	if cs.Schema() != nil {
		opts.Schema = cs.Schema()
	}
	if cs.DryRun() != nil {
		// ServerSideDiff=true (an object's or the Application's
		// compare-options, or Options.ServerSideDiff) asks the server.
		opts.DryRun = cs.DryRun()
	}
	opts.KnownTypeFields = e.opts.KnownTypeFields
	opts.Types = e.types // one set of built-in type trees for every app
	opts.Rules = e.rules // and one compiled copy of each jq ignore rule
	opts.IgnoreAggregatedRoles = e.opts.IgnoreAggregatedRoles
	opts.CompareAllStatus, opts.IgnoreStatus = e.opts.CompareStatus == CompareStatusAll, e.opts.IgnoreStatus
	cmpOpts, err := resource.ParseOptions(app.Annotations[resource.AnnotationCompareOptions])
	if err != nil {
		return nil, fmt.Errorf("application %s: annotation %s: %w", app.Name, resource.AnnotationCompareOptions, err)
	}
	opts.CompareOptions = cmpOpts
	if e.opts.Sync.FieldManager != "" {
		opts.FieldManager = e.opts.Sync.FieldManager
	}
	syncOpts, err := appSyncOptions(app)
	if err != nil {
		return nil, err
	}
	opts.SyncOptions = syncOpts
	if !e.opts.Sync.ClientSideApply {
		// Compare as the syncer applies: server-side apply by default. An
		// app's or object's ServerSideApply=false still selects the
		// three-way comparison of client-side apply.
		opts.Mode = diff.ModeStructuredMerge
	}
	if e.opts.ServerSideDiff {
		opts.Mode = diff.ModeServerSide
	}
	// A sync that forces conflicts takes every field desired sets, also
	// those another applier or a subresource writer (an autoscaler's
	// replicas) owns: the comparison must show them as drift, or it would
	// say Synced while the next sync resets them. Without force, such a
	// field is left to its owner, and so is it in the comparison.
	opts.HonourOtherManagers = !e.opts.Sync.ForceConflicts
	for _, ig := range append(slices.Clip(e.opts.IgnoreDifferences), app.Spec.IgnoreDifferences...) {
		opts.IgnoreRules = append(opts.IgnoreRules, diff.IgnoreRule{Group: ig.Group, Kind: ig.Kind, Name: ig.Name, Namespace: ig.Namespace,
			JSONPointers: ig.JSONPointers, JQPathExpressions: ig.JQPathExpressions, ManagedFieldsManagers: ig.ManagedFieldsManagers})
	}
	keyBytes, _ := json.Marshal(struct {
		Ignore  []ResourceIgnoreDifferences
		Sync    string
		Compare string
		Cluster string
	}{app.Spec.IgnoreDifferences, syncOpts.String(), cmpOpts.String(), fmt.Sprintf("%s\x00%p", cs.Name(), cs)})
	key := string(keyBytes)
	e.mu.Lock()
	defer e.mu.Unlock()
	if d, ok := e.differs[e.AppKey(app)]; ok && d.key == key {
		return d.differ, nil
	}
	d, err := e.newDiffer(fmt.Sprintf("%s\x00%p", key, cs), opts)
	if err != nil {
		return nil, err
	}
	md := newMemoDiffer(d)
	e.differs[e.AppKey(app)] = &differEntry{key: key, differ: md}
	return md, nil
}

// maxDifferBases bounds the compiled Differs kept for forking: one per
// distinct set of comparison options in use.
const maxDifferBases = 256

// newDiffer builds an app's Differ for opts (whose options key is key, the
// destination's cluster state included, since its schema and dry-runner
// are in opts): a fork of the compiled Differ of the same options when the
// engine builds its own, else the host's Options.NewDiffer. Called with
// e.mu held.
func (e *Engine) newDiffer(key string, opts diff.Options) (Differ, error) {
	if e.bases == nil {
		return e.opts.NewDiffer(opts)
	}
	base, ok := e.bases.Get(key)
	if !ok {
		var err error
		if base, err = diff.New(opts); err != nil {
			return nil, err
		}
		e.bases.Add(key, base)
	}
	return base.Fork()
}

// appSyncOptions parses the app's syncOptions.
func appSyncOptions(app *Application) (resource.Options, error) {
	if app.Spec.SyncPolicy == nil {
		return resource.Options{}, nil
	}
	return resource.ParseOptions(strings.Join(app.Spec.SyncPolicy.SyncOptions, ","))
}

// Refresh compares an application's desired state in Git with the live
// state of its destination: it resolves and snapshots each source, renders
// it (cached by content), checks every object against the app's project,
// diffs each object against the cluster cache, judges health and
// aggregates. The error is non-nil when the comparison could not be made;
// the Status then says Unknown and carries the error as a condition.
func (e *Engine) Refresh(ctx context.Context, app *Application) (Status, error) {
	st, _, err := e.refresh(ctx, app, false)
	return st, err
}

// HardRefresh is Refresh past every cache (Argo CD's hard refresh): the
// branches and tags of the app's repositories are resolved again (see
// Invalidate) and its manifests rendered again even when the render cache
// holds them, and the new render replaces the cached one. Run does it
// every Options.HardInterval.
func (e *Engine) HardRefresh(ctx context.Context, app *Application) (Status, error) {
	st, _, err := e.refresh(ctx, app, true)
	return st, err
}

// refresh is Refresh (HardRefresh when hard) that also returns the
// Applications the app renders (app of apps).
func (e *Engine) refresh(ctx context.Context, app *Application, hard bool) (Status, []*Application, error) {
	start := time.Now()
	defer func() {
		e.metrics.Reconciled(e.metricsApp(app), time.Since(start).Seconds())
	}()
	st := Status{Sync: Unknown, Health: health.Status{Code: health.Unknown}}
	fail := func(ct ConditionType, err error) (Status, []*Application, error) {
		st.Conditions = append(st.Conditions, Condition{Type: ct, Message: err.Error(), Err: err})
		st.ReconciledAt = time.Now()
		return st, nil, fmt.Errorf("refresh %s: %w", app.Name, err)
	}
	proj, err := e.project(app)
	if err != nil {
		return fail(ConditionInvalidSpec, err)
	}
	if err := e.checkApplication(proj, app); err != nil {
		return fail(ConditionInvalidSpec, err)
	}
	cs, err := e.cluster(ctx, app.Spec.Destination)
	if err != nil {
		return fail(ConditionComparisonError, err)
	}
	revs, err := e.resolveSources(ctx, app, hard)
	if err != nil {
		return fail(ConditionComparisonError, err)
	}
	differ, derr := e.differFor(app, cs)
	inputs, memoizable := e.memoInputs(app, cs, revs)
	memoizable = memoizable && derr == nil
	cmp, desired, memoized := comparison{}, rendered{}, false
	if memoizable && !hard {
		cmp, desired, memoized = e.reuseMemo(ctx, app, cs, differ, inputs)
	}
	if !memoized {
		if desired, err = e.renderResolved(ctx, app, cs, nil, revs, hard); err != nil {
			return fail(ConditionComparisonError, err)
		}
		if derr != nil {
			return fail(ConditionInvalidSpec, derr)
		}
		if cmp, err = e.compare(ctx, app, proj, cs, differ, desired.objects); err != nil {
			return fail(ConditionComparisonError, err)
		}
		if memoizable {
			e.keepMemo(app, cs, differ, inputs, desired, cmp)
		}
	}
	e.metrics.Refreshed(memoized)
	st.Revision = desired.Revision()
	st.Resources, st.Conditions = cmp.rows, cmp.conditions
	if c := excludedCondition(desired.excluded); c != nil {
		st.Conditions = append(st.Conditions, *c)
	}
	if c := e.orphanCondition(proj, app, cs); c != nil {
		st.Conditions = append(st.Conditions, *c)
	}
	st.Sync = cmp.sync
	st.Health = health.Aggregate(cmp.healths, health.DefaultAggregateOptions())
	st.ReconciledAt = time.Now()
	if cmp.policyErr != nil {
		st.Sync = Unknown
		return st, cmp.children, fmt.Errorf("refresh %s: %w", app.Name, cmp.policyErr)
	}
	return st, cmp.children, nil
}

// comparison is the per-object outcome of a refresh.
type comparison struct {
	rows       []ResourceStatus
	healths    []health.ResourceHealth
	conditions []Condition
	sync       SyncStatusCode
	policyErr  error
	children   []*Application
	// fromLive are the indices of healths judged from a live object.
	fromLive []int
	// volatile marks a comparison that must not be memoized: a diff
	// failed, a verdict came from a deduced schema, or a kind is tainted.
	volatile bool
	// seen is the live fingerprint of the objects this comparison read,
	// taken as it read them (liveHash).
	seen uint64
}

// compare diffs the rendered objects with the cluster's cache. The objects
// are compare's own (render returns copies no one else holds): it settles
// their namespaces and tracking in place.
func (e *Engine) compare(ctx context.Context, app *Application, proj *Project, cs *clusterState, differ Differ, objs []*unstructured.Unstructured) (comparison, error) {
	cmp := comparison{sync: Synced}
	seen := e.newLiveHash()
	tainted := cs.Cache().Tainted()
	taintedGK := map[schema.GroupKind]error{}
	for gvk, err := range tainted {
		taintedGK[gvk.GroupKind()] = err
	}
	desiredKeys := map[resource.Key]bool{}
	crds := sync.CRDScopes(objs)
	var policyErrs []error
	var taintedUsed []string
	for _, obj := range objs {
		info, err := hooks.Of(obj)
		if err != nil {
			return comparison{}, err
		}
		if info.Skip {
			continue
		}
		gk := resource.GroupKindOf(obj)
		if gk == gkApplication && !e.opts.ApplyChildApplications {
			child, err := childApplication(obj)
			if err != nil {
				cmp.conditions = append(cmp.conditions, Condition{Type: ConditionInvalidSpec, Message: err.Error(), Err: err})
				cmp.sync = Unknown
				continue
			}
			cmp.children = append(cmp.children, child)
			cmp.rows = append(cmp.rows, ResourceStatus{Key: resource.KeyOf(obj), Status: Synced})
			continue
		}
		// The render settled the namespace of every kind the cluster or a
		// CRD of the same render knows (settleScopes); a kind neither
		// knows is taken as namespaced when it names a namespace or the
		// app has a destination namespace (it is reported missing).
		namespaced, from := sync.Scope(gk, cs.ServedScope(), crds)
		if from == sync.ScopeUnknown {
			namespaced = obj.GetNamespace() != "" || app.Spec.Destination.Namespace != ""
			if namespaced && obj.GetNamespace() == "" {
				obj.SetNamespace(app.Spec.Destination.Namespace)
			} else if !namespaced {
				obj.SetNamespace("")
			}
		}
		key := resource.KeyOf(obj)
		if err := cs.Manages(obj, namespaced); err != nil {
			return comparison{}, err
		}
		if err := project.CheckObject(proj, app.Spec.Destination, obj, namespaced); err != nil {
			policyErrs = append(policyErrs, err)
		}
		for _, pol := range e.opts.Policies {
			if err := pol.Check(ctx, app, obj); err != nil {
				policyErrs = append(policyErrs, err)
			}
		}
		if info.Hook {
			for _, k := range hookKeys(obj, key, cs.Cache().Managed(e.AppKey(app))) {
				cmp.rows = append(cmp.rows, ResourceStatus{Key: k, Status: Synced, Hook: true})
			}
			continue
		}
		desiredKeys[key] = true
		if err, bad := taintedGK[gk]; bad {
			taintedUsed = append(taintedUsed, fmt.Sprintf("%s (%v)", gk, err))
			cmp.rows = append(cmp.rows, ResourceStatus{Key: key, Status: Unknown})
			cmp.sync, cmp.volatile = Unknown, true
			continue
		}
		if err := e.opts.Tracking.Set(obj, e.AppKey(app)); err != nil {
			return comparison{}, err
		}
		live, _ := cs.Cache().Get(key)
		seen.desired(live)
		row := ResourceStatus{Key: key, Status: Synced}
		res, err := differ.Diff(ctx, obj, live)
		switch {
		case err != nil:
			row.Status, cmp.volatile = Unknown, true
			cmp.conditions = append(cmp.conditions, Condition{Type: ConditionComparisonError, Message: err.Error(), Err: err})
		case res.Modified:
			row.Status, row.Diff = OutOfSync, res.Text
		}
		if res.Deduced {
			cmp.volatile = true
		}
		if live != nil {
			if owner := e.opts.Tracking.AppOf(live); owner != "" && owner != e.AppKey(app) {
				cmp.conditions = append(cmp.conditions, Condition{Type: ConditionSharedResource,
					Message: fmt.Sprintf("%s is also managed by application %s", key, owner)})
			}
			hs, err := health.CheckContext(ctx, e.health, live)
			if err != nil {
				hs = &health.Status{Code: health.Unknown, Message: err.Error()}
			}
			row.Health = hs
			cmp.fromLive = append(cmp.fromLive, len(cmp.healths))
			cmp.healths = append(cmp.healths, health.ResourceHealthOf(live, hs))
		} else {
			row.Health = &health.Status{Code: health.Missing}
			cmp.healths = append(cmp.healths, health.ResourceHealthOf(obj, row.Health))
		}
		cmp.merge(row)
	}
	managed := cs.Cache().Managed(e.AppKey(app))
	seen.managed(managed)
	cmp.seen = seen.sum()
	for _, live := range managed {
		key := resource.KeyOf(live)
		if desiredKeys[key] {
			continue
		}
		if info, err := hooks.Of(live); err == nil && info.Hook {
			continue
		}
		co, _ := resource.CompareOptionsOf(live)
		if co.Has(resource.OptionIgnoreExtraneous, "true") {
			continue
		}
		so, _ := resource.SyncOptionsOf(live)
		keep := so.Has(resource.OptionPrune, "false") || so.Has(resource.OptionPrune, "confirm")
		cmp.merge(ResourceStatus{Key: key, Status: OutOfSync, RequiresPruning: true, PruneDisabled: keep})
	}
	if md, ok := differ.(*memoDiffer); ok {
		md.forget(desiredKeys)
	}
	if len(taintedUsed) > 0 {
		sort.Strings(taintedUsed)
		cmp.conditions = append(cmp.conditions, Condition{Type: ConditionTaintedKinds,
			Message: "the cluster cache cannot serve " + strings.Join(taintedUsed, ", ")})
	}
	if len(policyErrs) > 0 {
		cmp.policyErr = errors.Join(policyErrs...)
		cmp.conditions = append(cmp.conditions, Condition{Type: ConditionInvalidSpec, Message: cmp.policyErr.Error(), Err: cmp.policyErr})
	}
	sort.SliceStable(cmp.rows, func(i, j int) bool { return cmp.rows[i].Key.String() < cmp.rows[j].Key.String() })
	return cmp, nil
}

// hookKeys names a desired hook's rows: its own key, or, for a hook named
// by generateName, the live hooks of the app created from it (by their
// generated names), else the generateName itself, so no row is nameless.
func hookKeys(obj *unstructured.Unstructured, key resource.Key, managed []*unstructured.Unstructured) []resource.Key {
	prefix := obj.GetGenerateName()
	if key.Name != "" || prefix == "" {
		return []resource.Key{key}
	}
	var keys []resource.Key
	for _, live := range managed {
		k := resource.KeyOf(live)
		if k.Group == key.Group && k.Kind == key.Kind && k.Namespace == key.Namespace && strings.HasPrefix(k.Name, prefix) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		key.Name = prefix
		keys = append(keys, key)
	}
	return keys
}

func (c *comparison) merge(row ResourceStatus) {
	c.rows = append(c.rows, row)
	if row.Status == OutOfSync && c.sync == Synced {
		c.sync = OutOfSync
	}
	if row.Status == Unknown {
		c.sync = Unknown
	}
}

var gkApplication = schema.GroupKind{Group: "argoproj.io", Kind: "Application"}

// childApplication decodes an Application found in an app's manifests with
// LoadApplications' strictness.
func childApplication(obj *unstructured.Unstructured) (*Application, error) {
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	apps, err := LoadApplications(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("child %s: %w", resource.KeyOf(obj), err)
	}
	return &apps[0], nil
}

// withoutChildApplications drops the Applications an app renders from what
// it syncs, unless the host applies them (Options.ApplyChildApplications).
func (e *Engine) withoutChildApplications(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	if e.opts.ApplyChildApplications {
		return objs
	}
	out := objs[:0:0]
	for _, o := range objs {
		if resource.GroupKindOf(o) != gkApplication {
			out = append(out, o)
		}
	}
	return out
}
