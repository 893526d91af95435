package compare

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/hooks"
	"github.com/kubegitops/gitops/project"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// Result is the per-object outcome of a comparison.
type Result struct {
	// Rows are the objects' rows of the app's status, sorted by key.
	Rows []appstatus.ResourceRow
	// Healths are the health of every compared object, for aggregation.
	Healths []health.ResourceHealth
	// Conditions are the comparison's errors and warnings.
	Conditions []appstatus.Condition
	// Sync is the app's sync status.
	Sync appstatus.SyncStatusCode
	// PolicyErr joins the project's and the host's refusals of desired
	// objects (also a condition); the status's sync is then Unknown.
	PolicyErr error
	// Children are the Applications the app renders (app of apps), unless
	// Config.ApplyChildApplications.
	Children []*v1alpha1.Application
	// fromLive are the indices of healths judged from a live object.
	fromLive []int
	// checker judged them (Comparer.checker as the comparison started).
	checker health.Checker
	// volatile marks a comparison that must not be memoized: a diff
	// failed, a verdict came from a deduced schema, or a kind is tainted.
	volatile bool
	// seen is the live fingerprint of the objects this comparison read,
	// taken as it read them (liveHash).
	seen uint64
}

// Compare diffs the rendered objects of app (whose key is appKey) with
// the destination's cache. The objects are Compare's own (a render returns
// copies no one else holds): it settles their namespaces and tracking in
// place.
func (c *Comparer) Compare(ctx context.Context, app *v1alpha1.Application, appKey string, proj *v1alpha1.AppProject, dest Destination, differ Differ, objs []*unstructured.Unstructured) (Result, error) {
	cmp := Result{Sync: appstatus.Synced, checker: c.checker()}
	seen := c.newLiveHash()
	tainted := dest.Cache.Tainted()
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
			return Result{}, err
		}
		if info.Skip {
			continue
		}
		gk := resource.GroupKindOf(obj)
		if gk == gkApplication && !c.cfg.ApplyChildApplications {
			cmp.child(obj)
			continue
		}
		// The render settled the namespace of every kind the cluster or a
		// CRD of the same render knows (settleScopes); a kind neither
		// knows is taken as namespaced when it names a namespace or the
		// app has a destination namespace (it is reported missing).
		namespaced, from := sync.Scope(gk, dest.Scope, crds)
		if from == sync.ScopeUnknown {
			namespaced = obj.GetNamespace() != "" || app.Spec.Destination.Namespace != ""
			if namespaced && obj.GetNamespace() == "" {
				obj.SetNamespace(app.Spec.Destination.Namespace)
			} else if !namespaced {
				obj.SetNamespace("")
			}
		}
		key := resource.KeyOf(obj)
		if dest.Manages != nil {
			if err := dest.Manages(obj, namespaced); err != nil {
				return Result{}, err
			}
		}
		policyErrs = append(policyErrs, c.refusals(ctx, app, proj, dest, obj, namespaced)...)
		if info.Hook {
			for _, k := range hookKeys(obj, key, dest.Cache.Managed(appKey)) {
				cmp.Rows = append(cmp.Rows, appstatus.ResourceRow{Key: k, Status: appstatus.Synced, Hook: true})
			}
			continue
		}
		desiredKeys[key] = true
		if err, bad := taintedGK[gk]; bad {
			taintedUsed = append(taintedUsed, fmt.Sprintf("%s (%v)", gk, err))
			cmp.Rows = append(cmp.Rows, appstatus.ResourceRow{Key: key, Status: appstatus.Unknown})
			cmp.Sync, cmp.volatile = appstatus.Unknown, true
			continue
		}
		if err := c.cfg.Tracking.Set(obj, appKey); err != nil {
			return Result{}, err
		}
		live, _ := dest.Cache.Get(key)
		seen.desired(live)
		live, err = wholeLive(ctx, dest, live, key)
		if err != nil {
			cmp.Rows = append(cmp.Rows, appstatus.ResourceRow{Key: key, Status: appstatus.Unknown})
			cmp.Conditions = append(cmp.Conditions, appstatus.Condition{Type: appstatus.ConditionComparisonError, Message: err.Error(), Err: err})
			cmp.Sync, cmp.volatile = appstatus.Unknown, true
			continue
		}
		c.judge(ctx, appKey, differ, key, obj, live, &cmp)
	}
	managed := dest.Cache.Managed(appKey)
	seen.managed(managed)
	cmp.seen = seen.sum()
	cmp.extraneous(managed, desiredKeys)
	if md, ok := differ.(*MemoDiffer); ok {
		md.forget(desiredKeys)
	}
	if len(taintedUsed) > 0 {
		sort.Strings(taintedUsed)
		cmp.Conditions = append(cmp.Conditions, appstatus.Condition{Type: appstatus.ConditionTaintedKinds,
			Message: "the cluster cache cannot serve " + strings.Join(taintedUsed, ", ")})
	}
	if len(policyErrs) > 0 {
		cmp.PolicyErr = errors.Join(policyErrs...)
		cmp.Conditions = append(cmp.Conditions, appstatus.Condition{Type: appstatus.ConditionInvalidSpec, Message: cmp.PolicyErr.Error(), Err: cmp.PolicyErr})
	}
	sort.SliceStable(cmp.Rows, func(i, j int) bool { return cmp.Rows[i].Key.String() < cmp.Rows[j].Key.String() })
	return cmp, nil
}

// child adds a child Application (app of apps) the app renders: a row of
// its own, or, when it does not decode, a condition.
func (c *Result) child(obj *unstructured.Unstructured) {
	child, err := childApplication(obj)
	if err != nil {
		c.Conditions = append(c.Conditions, appstatus.Condition{Type: appstatus.ConditionInvalidSpec, Message: err.Error(), Err: err})
		c.Sync = appstatus.Unknown
		return
	}
	c.Children = append(c.Children, child)
	c.Rows = append(c.Rows, appstatus.ResourceRow{Key: resource.KeyOf(obj), Status: appstatus.Synced})
}

// refusals are the project's and the host's policies' refusals of obj,
// on the app's destination cluster (its server and name, whichever the app
// gives).
func (c *Comparer) refusals(ctx context.Context, app *v1alpha1.Application, proj *v1alpha1.AppProject, dest Destination, obj *unstructured.Unstructured, namespaced bool) []error {
	var errs []error
	on := app.Spec.Destination
	if on.Server == "" {
		on.Server = dest.Server
	}
	if on.Name == "" {
		on.Name = dest.Name
	}
	if err := project.CheckObject(proj, on, obj, namespaced); err != nil {
		errs = append(errs, err)
	}
	for _, pol := range c.cfg.Policies {
		if err := pol.Check(ctx, app, obj); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// judge diffs one desired object with its live object (nil when there is
// none), judges its health and adds its row to cmp.
func (c *Comparer) judge(ctx context.Context, appKey string, differ Differ, key resource.Key, obj, live *unstructured.Unstructured, cmp *Result) {
	row := appstatus.ResourceRow{Key: key, Status: appstatus.Synced}
	res, err := differ.Diff(ctx, obj, live)
	switch {
	case err != nil:
		row.Status, cmp.volatile = appstatus.Unknown, true
		cmp.Conditions = append(cmp.Conditions, appstatus.Condition{Type: appstatus.ConditionComparisonError, Message: err.Error(), Err: err})
	case res.Modified:
		row.Status, row.Diff = appstatus.OutOfSync, res.Text
	}
	if res.Deduced {
		cmp.volatile = true
	}
	if live != nil {
		if owner := c.cfg.Tracking.AppOf(live); owner != "" && owner != appKey {
			cmp.Conditions = append(cmp.Conditions, appstatus.Condition{Type: appstatus.ConditionSharedResource,
				Message: fmt.Sprintf("%s is also managed by application %s", key, owner)})
		}
		hs, err := health.CheckContext(ctx, cmp.checker, live)
		if err != nil {
			hs = &health.Status{Code: health.Unknown, Message: err.Error()}
		}
		row.Health = hs
		cmp.fromLive = append(cmp.fromLive, len(cmp.Healths))
		cmp.Healths = append(cmp.Healths, health.ResourceHealthOf(live, hs))
	} else {
		row.Health = &health.Status{Code: health.Missing}
		cmp.Healths = append(cmp.Healths, health.ResourceHealthOf(obj, row.Health))
	}
	cmp.merge(row)
}

// extraneous adds the rows of the app's live objects it no longer renders
// (not in desired): each requires pruning, unless it is a hook or its
// compare-options say IgnoreExtraneous.
func (c *Result) extraneous(managed []*unstructured.Unstructured, desired map[resource.Key]bool) {
	for _, live := range managed {
		key := resource.KeyOf(live)
		if desired[key] {
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
		c.merge(appstatus.ResourceRow{Key: key, Status: appstatus.OutOfSync, RequiresPruning: true, PruneDisabled: keep})
	}
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

func (c *Result) merge(row appstatus.ResourceRow) {
	c.Rows = append(c.Rows, row)
	if row.Status == appstatus.OutOfSync && c.Sync == appstatus.Synced {
		c.Sync = appstatus.OutOfSync
	}
	if row.Status == appstatus.Unknown {
		c.Sync = appstatus.Unknown
	}
}

var gkApplication = schema.GroupKind{Group: "argoproj.io", Kind: "Application"}

// IsApplication says whether obj is an Application (app of apps).
func IsApplication(obj *unstructured.Unstructured) bool {
	return resource.GroupKindOf(obj) == gkApplication
}

// childApplication decodes an Application found in an app's manifests with
// LoadApplications' strictness.
func childApplication(obj *unstructured.Unstructured) (*v1alpha1.Application, error) {
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	apps, err := v1alpha1.LoadApplications(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("child %s: %w", resource.KeyOf(obj), err)
	}
	return &apps[0], nil
}
