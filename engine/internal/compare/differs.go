package compare

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/resource"
)

// entry is an app's Differ, built for its ignore rules and options and
// kept while they do not change (compiling jq rules is not free).
type entry struct {
	key    string
	differ Differ
	// memo is the app's last comparison with this differ (memo.go).
	memo *memo
}

// maxDifferBases bounds the compiled Differs kept for forking: one per
// distinct set of comparison options in use.
const maxDifferBases = 256

// Differ returns the Differ of app (whose key is appKey) for its
// destination dest: the cluster's schema models the kinds client-go has no
// model for. The Differ memoizes its verdicts (MemoDiffer).
func (c *Comparer) Differ(app *v1alpha1.Application, appKey string, dest Destination) (Differ, error) {
	opts, syncOpts, cmpOpts, err := c.options(app, dest)
	if err != nil {
		return nil, err
	}
	keyBytes, _ := json.Marshal(struct {
		Ignore  []v1alpha1.ResourceIgnoreDifferences
		Sync    string
		Compare string
		Cluster string
	}{app.Spec.IgnoreDifferences, syncOpts.String(), cmpOpts.String(), dest.ID})
	key := string(keyBytes)
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.entries[appKey]; ok && d.key == key {
		return d.differ, nil
	}
	d, err := c.newDiffer(key+"\x00"+dest.ID, opts)
	if err != nil {
		return nil, err
	}
	md := NewMemoDiffer(d)
	c.entries[appKey] = &entry{key: key, differ: md}
	return md, nil
}

// options are the diff options of app at dest, with the app's sync and
// compare options they were made from.
func (c *Comparer) options(app *v1alpha1.Application, dest Destination) (opts diff.Options, syncOpts, cmpOpts resource.Options, err error) {
	opts = diff.DefaultOptions()
	opts.Tracking = c.cfg.Tracking
	if dest.Schema != nil {
		opts.Schema = dest.Schema
	}
	if dest.DryRun != nil {
		// ServerSideDiff=true (an object's or the Application's
		// compare-options, or Options.ServerSideDiff) asks the server.
		opts.DryRun = dest.DryRun
	}
	opts.KnownTypeFields = c.cfg.KnownTypeFields
	opts.Types = c.types // one set of built-in type trees for every app
	opts.Rules = c.rules // and one compiled copy of each jq ignore rule
	opts.IgnoreAggregatedRoles = c.cfg.IgnoreAggregatedRoles
	if c.cfg.JQTimeout > 0 {
		opts.JQTimeout = c.cfg.JQTimeout
	}
	opts.CompareAllStatus, opts.IgnoreStatus = c.cfg.CompareAllStatus, c.cfg.IgnoreStatus
	if cmpOpts, err = resource.ParseOptions(app.Annotations[resource.AnnotationCompareOptions]); err != nil {
		return opts, syncOpts, cmpOpts, fmt.Errorf("application %s: annotation %s: %w", app.Name, resource.AnnotationCompareOptions, err)
	}
	opts.CompareOptions = cmpOpts
	if c.cfg.FieldManager != "" {
		opts.FieldManager = c.cfg.FieldManager
	}
	if syncOpts, err = AppSyncOptions(app); err != nil {
		return opts, syncOpts, cmpOpts, err
	}
	opts.SyncOptions = syncOpts
	if !c.cfg.ClientSideApply {
		// Compare as the syncer applies: server-side apply by default. An
		// app's or object's ServerSideApply=false still selects the
		// three-way comparison of client-side apply.
		opts.Mode = diff.ModeStructuredMerge
	}
	if c.cfg.ServerSideDiff {
		opts.Mode = diff.ModeServerSide
	}
	// A sync that forces conflicts takes every field desired sets, also
	// those another applier or a subresource writer (an autoscaler's
	// replicas) owns: the comparison must show them as drift, or it would
	// say Synced while the next sync resets them. Without force, such a
	// field is left to its owner, and so is it in the comparison.
	opts.HonourOtherManagers = !c.cfg.ForceConflicts
	for _, ig := range append(slices.Clip(c.cfg.IgnoreDifferences), app.Spec.IgnoreDifferences...) {
		opts.IgnoreRules = append(opts.IgnoreRules, diff.IgnoreRule{Group: ig.Group, Kind: ig.Kind, Name: ig.Name, Namespace: ig.Namespace,
			JSONPointers: ig.JSONPointers, JQPathExpressions: ig.JQPathExpressions, ManagedFieldsManagers: ig.ManagedFieldsManagers})
	}
	return opts, syncOpts, cmpOpts, nil
}

// newDiffer builds an app's Differ for opts (whose options key is key, the
// destination's connection included, since its schema and dry-runner are
// in opts): a fork of the compiled Differ of the same options when the
// Comparer builds its own, else the host's Config.NewDiffer. Called with
// c.mu held.
func (c *Comparer) newDiffer(key string, opts diff.Options) (Differ, error) {
	if c.bases == nil {
		return c.cfg.NewDiffer(opts)
	}
	base, ok := c.bases.Get(key)
	if !ok {
		var err error
		if base, err = diff.New(opts); err != nil {
			return nil, err
		}
		c.bases.Add(key, base)
	}
	return base.Fork()
}

// Forget drops the app's Differ and memo (the app is gone).
func (c *Comparer) Forget(appKey string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, appKey)
}

// Current returns the app's Differ, or nil before its first comparison.
func (c *Comparer) Current(appKey string) Differ {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.entries[appKey]; ok {
		return d.differ
	}
	return nil
}

// Bases returns the number of compiled Differs kept for forking, and
// whether the Comparer forks at all (false with Config.NewDiffer).
func (c *Comparer) Bases() (n int, forking bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bases == nil {
		return 0, false
	}
	return c.bases.Len(), true
}

// AppSyncOptions parses the app's syncOptions.
func AppSyncOptions(app *v1alpha1.Application) (resource.Options, error) {
	if app.Spec.SyncPolicy == nil {
		return resource.Options{}, nil
	}
	return resource.ParseOptions(strings.Join(app.Spec.SyncPolicy.SyncOptions, ","))
}
