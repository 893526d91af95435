package diff

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/kubegitops/gitops/resource"
)

// Differ compares desired objects with live ones. It is safe for concurrent
// use; build one per set of options (they hold the application's ignore
// rules) and keep it, or Fork it for each application of the same options.
type Differ struct {
	opts     Options
	trees    *typeTrees
	norm     *normalizer
	rules    []*compiledRule
	mask     *masker
	ssdCache *lru.Cache[string, *unstructured.Unstructured]
	// deduced types any object; withModel falls back to it.
	deduced managedfields.TypeConverter
}

// New returns a Differ. It compiles every ignore rule once and reports the
// first that does not compile as a *RuleError.
func New(opts Options) (*Differ, error) {
	opts = opts.withDefaults()
	sys, err := compileRules(opts.SystemIgnoreRules, 0, opts.Rules)
	if err != nil {
		return nil, fmt.Errorf("diff: system %w", err)
	}
	app, err := compileRules(opts.IgnoreRules, len(sys), opts.Rules)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	trees := newTypeTrees()
	if opts.Types != nil {
		trees = opts.Types.trees
	}
	known, err := compileKnownTypes(trees, opts.KnownTypeFields)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	norm := newNormalizer(trees, opts)
	norm.known = known
	d := &Differ{
		opts:    opts,
		trees:   trees,
		norm:    norm,
		rules:   append(sys, app...),
		deduced: NewDeducedTypeConverter(),
	}
	if err := d.ownState(); err != nil {
		return nil, err
	}
	return d, nil
}

// Fork returns a Differ with d's options that shares what New compiled
// (ignore rules, normaliser, type trees; all immutable once built) and has
// its own masking key, so that the placeholders of one never match the
// other's, and its own server-side dry-run cache. New costs kilobytes per
// Differ and Fork a few hundred bytes: a host with many applications of the
// same options builds one Differ and forks it per application.
func (d *Differ) Fork() (*Differ, error) {
	f := &Differ{opts: d.opts, trees: d.trees, norm: d.norm, rules: d.rules, deduced: d.deduced}
	if err := f.ownState(); err != nil {
		return nil, err
	}
	return f, nil
}

// ownState gives d what no other Differ may share: a masking key of its
// own, and its own cache of server-side dry-run results.
func (d *Differ) ownState() error {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("diff: masking key: %w", err)
	}
	d.mask = &masker{key: key}
	if d.opts.ServerSideCacheSize > 0 {
		var err error
		if d.ssdCache, err = lru.New[string, *unstructured.Unstructured](d.opts.ServerSideCacheSize); err != nil {
			return fmt.Errorf("diff: cache: %w", err)
		}
	}
	return nil
}

// Normalize returns obj through the normalisation pipeline that every diff
// uses (see normalizer.normalize for the rules), without ignore rules or
// masking. obj is not modified.
func (d *Differ) Normalize(obj *unstructured.Unstructured) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: d.norm.normalizedCopy(obj.Object, true)}
}

// Diff compares desired (from Git, rendered) with live (from the cluster or
// its cache). Either may be nil: a nil live is a missing object, a nil
// desired an extraneous one. live may carry managedFields and the
// last-applied annotation or not; ModeThreeWay uses the annotation and
// ModeStructuredMerge the managedFields when present (see Mode).
//
// Errors are *Error, naming the object; a Secret's values never appear in
// them, nor anywhere in the Result except Patch.Data.
func (d *Differ) Diff(ctx context.Context, desired, live *unstructured.Unstructured) (Result, error) {
	if desired == nil && live == nil {
		return Result{}, errors.New("diff: no desired and no live object")
	}
	var sc *scrubber
	if isSecret(desired) || isSecret(live) {
		sc = d.mask.newScrubber(desired, live)
	}
	key := keyOf(desired, live)
	res, err := d.diff(ctx, key, desired, live)
	if err != nil {
		return Result{}, wrapError(key, err, sc)
	}
	if sc != nil {
		if err := d.maskResult(&res, sc); err != nil {
			return Result{}, wrapError(key, err, sc)
		}
	}
	return res, nil
}

func keyOf(desired, live *unstructured.Unstructured) resource.Key {
	if desired == nil {
		return resource.KeyOf(live)
	}
	k := resource.KeyOf(desired)
	if k.Namespace == "" && live != nil {
		k.Namespace = live.GetNamespace()
	}
	return k
}

func (d *Differ) diff(ctx context.Context, key resource.Key, desired, live *unstructured.Unstructured) (Result, error) {
	if desired != nil && live != nil {
		lk := resource.KeyOf(live)
		if lk.Group != key.Group || lk.Kind != key.Kind || lk.Name != key.Name || lk.Namespace != key.Namespace {
			return Result{}, fmt.Errorf("live object is %s, not the same object", lk)
		}
	}
	source := desired
	if source == nil {
		source = live
	}
	cmpOpts, syncOpts, err := d.objectOptions(source)
	if err != nil {
		return Result{}, err
	}
	mode := d.modeFor(cmpOpts, syncOpts)
	res := Result{Key: key, Mode: mode}
	if log := d.opts.Logger.V(2); log.Enabled() {
		log.Info("diff", "object", key.String(), "mode", string(mode), "desired", desired != nil, "live", live != nil)
	}
	gvk := source.GroupVersionKind()

	switch {
	case live == nil:
		return d.diffMissing(ctx, res, gvk, desired)
	case desired == nil:
		return d.diffExtraneous(ctx, res, gvk, live, cmpOpts)
	}

	// desired is normalised as declared, without the server's defaults:
	// the prediction merges it into live and only then fills defaults into
	// what the merge leaves absent, as the server does on write.
	dn := d.norm.normalizedCopy(desired.Object, false)
	if ns, _ := dn["metadata"].(map[string]any); ns != nil && key.Namespace != "" {
		if _, ok := ns["namespace"]; !ok {
			ns["namespace"] = key.Namespace
		}
	}
	ln := d.norm.normalizedCopy(live.Object, true)
	predicted, err := d.predict(ctx, &res, gvk, desired, live, dn, ln, cmpOpts)
	if err != nil {
		return Result{}, err
	}
	d.norm.normalize(predicted)

	// Ignore rules remove fields from all three objects; the live values
	// they removed go back into the object the patch is computed from, so
	// that the patch leaves ignored fields as they are.
	liveFull := ln
	var desiredRemoved, liveRemoved []removedField
	matched, err := d.ignore(ctx, key, gvk, live, dn, &desiredRemoved)
	if err != nil {
		return Result{}, err
	}
	if matched {
		ln = deepCopyMap(ln)
		if _, err := d.ignore(ctx, key, gvk, live, ln, &liveRemoved); err != nil {
			return Result{}, err
		}
		if _, err := d.ignore(ctx, key, gvk, live, predicted, nil); err != nil {
			return Result{}, err
		}
		if !d.respectsIgnored() {
			res.ResetIgnored = resetIgnored(desiredRemoved, liveRemoved)
		}
	}

	res.Desired = &unstructured.Unstructured{Object: dn}
	res.Live = &unstructured.Unstructured{Object: ln}
	res.PredictedLive = &unstructured.Unstructured{Object: predicted}
	res.Changes = compareObjects(ln, predicted, d.trees.forGVK(gvk))
	res.Modified = len(res.Changes) > 0
	if !res.Modified {
		res.Changes = nil
		return res, nil
	}
	forPatch := predicted
	if len(liveRemoved) > 0 {
		forPatch = deepCopyMap(predicted)
		for _, r := range liveRemoved {
			restore(forPatch, r.path, deepCopyValue(r.value))
		}
	}
	if res.Patch, err = d.makePatch(gvk, liveFull, forPatch); err != nil {
		return Result{}, err
	}
	res.Text, err = unifiedText(key.String(), ln, predicted, d.opts.Color, d.opts.ContextLines)
	if len(res.ResetIgnored) > 0 {
		res.Text += resetNote(res.ResetIgnored)
	}
	return res, err
}

// predict computes the predicted live object in res.Mode from the
// normalised desired (dn) and live (ln) objects; it sets res.TwoWay.
func (d *Differ) predict(ctx context.Context, res *Result, gvk schema.GroupVersionKind, desired, live *unstructured.Unstructured, dn, ln map[string]any, cmpOpts resource.Options) (map[string]any, error) {
	var predicted, last map[string]any
	var err error
	if res.Mode == ModeStructuredMerge {
		if last, err = parseLastApplied(live.GetAnnotations()[resource.AnnotationLastApplied]); err != nil {
			return nil, err
		}
		if last != nil {
			d.norm.normalizeDeclared(last)
		}
	}
	switch res.Mode {
	case ModeServerSide:
		include := d.opts.IncludeMutationWebhook
		if v, set := cmpOpts.Bool(resource.OptionIncludeMutationWebhook); set {
			include = v
		}
		predicted, err = d.predictServerSide(ctx, gvk, desired, live, ln, include)
	case ModeStructuredMerge:
		res.TwoWay = len(live.GetManagedFields()) == 0
		res.SchemaFallback, res.Deduced, err = d.withModel(ctx, gvk, func(tc managedfields.TypeConverter) error {
			var err error
			predicted, err = d.predictStructuredMerge(tc, dn, ln, last, live)
			return err
		})
	default:
		lastRoot, err := d.lastAppliedRef(annotation(live.Object, resource.AnnotationLastApplied), gvk)
		if err != nil {
			return nil, err
		}
		res.TwoWay = !lastRoot.exists()
		predicted = predictThreeWay(lastRoot, dn, ln, d.trees.forGVK(gvk))
	}
	return predicted, err
}

// diffMissing is the result for a desired object with no live object.
func (d *Differ) diffMissing(ctx context.Context, res Result, gvk schema.GroupVersionKind, desired *unstructured.Unstructured) (Result, error) {
	dn := d.norm.normalizedCopy(desired.Object, false)
	// The server creates desired with its defaults filled in.
	predicted := deepCopyMap(dn)
	d.norm.normalize(predicted)
	matched, err := d.ignore(ctx, res.Key, gvk, nil, dn, nil)
	if err != nil {
		return Result{}, err
	}
	if matched {
		if _, err := d.ignore(ctx, res.Key, gvk, nil, predicted, nil); err != nil {
			return Result{}, err
		}
	}
	res.Missing, res.Modified = true, true
	res.Desired = &unstructured.Unstructured{Object: dn}
	res.PredictedLive = &unstructured.Unstructured{Object: predicted}
	res.Changes = []Change{{Path: "", Op: ChangeAdd}}
	res.Text, err = unifiedText(res.Key.String(), nil, predicted, d.opts.Color, d.opts.ContextLines)
	return res, err
}

// diffExtraneous is the result for a live object with no desired object:
// out of sync unless the IgnoreExtraneous compare option is set.
func (d *Differ) diffExtraneous(ctx context.Context, res Result, gvk schema.GroupVersionKind, live *unstructured.Unstructured, cmpOpts resource.Options) (Result, error) {
	ln := d.norm.normalizedCopy(live.Object, true)
	if _, err := d.ignore(ctx, res.Key, gvk, live, ln, nil); err != nil {
		return Result{}, err
	}
	res.Extraneous = true
	res.Live = &unstructured.Unstructured{Object: ln}
	if v, _ := cmpOpts.Bool(resource.OptionIgnoreExtraneous); v {
		return res, nil
	}
	res.Modified = true
	res.Changes = []Change{{Path: "", Op: ChangeRemove}}
	var err error
	res.Text, err = unifiedText(res.Key.String(), ln, nil, d.opts.Color, d.opts.ContextLines)
	return res, err
}

// annotation returns the annotation key of obj as GetAnnotations()[key]
// does, without copying the annotations: "" unless they are a map of
// strings (and nulls).
func annotation(obj map[string]any, key string) string {
	meta, _ := obj["metadata"].(map[string]any)
	anns, _ := meta["annotations"].(map[string]any)
	for _, v := range anns {
		if _, ok := v.(string); !ok && v != nil {
			return ""
		}
	}
	s, _ := anns[key].(string)
	return s
}

// objectOptions merges the application's compare and sync options with the
// object's annotations (the object wins).
func (d *Differ) objectOptions(obj *unstructured.Unstructured) (cmp, sync resource.Options, err error) {
	// An object without the annotations (the common case) reads nothing.
	var oc, os resource.Options
	if annotation(obj.Object, resource.AnnotationCompareOptions) != "" {
		if oc, err = resource.CompareOptionsOf(obj); err != nil {
			return cmp, sync, err
		}
	}
	if annotation(obj.Object, resource.AnnotationSyncOptions) != "" {
		if os, err = resource.SyncOptionsOf(obj); err != nil {
			return cmp, sync, err
		}
	}
	return d.opts.CompareOptions.Merge(oc), d.opts.SyncOptions.Merge(os), nil
}

// modeFor chooses the mode as Argo CD does: ServerSideDiff=true (compare
// option) selects ModeServerSide; otherwise ServerSideApply=true (sync
// option) selects ModeStructuredMerge; otherwise ModeThreeWay. Options.Mode
// is the application's choice, which an object's explicit
// ServerSideDiff=false or ServerSideApply=false overrides.
func (d *Differ) modeFor(cmp, sync resource.Options) Mode {
	ssd, ssdSet := cmp.Bool(resource.OptionServerSideDiff)
	ssa, ssaSet := sync.Bool(resource.OptionServerSideApply)
	switch {
	case ssdSet && ssd:
		return ModeServerSide
	case !ssdSet && d.opts.Mode == ModeServerSide:
		return ModeServerSide
	case ssaSet && ssa:
		return ModeStructuredMerge
	case !ssaSet && d.opts.Mode == ModeStructuredMerge:
		return ModeStructuredMerge
	}
	return ModeThreeWay
}

// maskResult masks a Secret's values in every part of res: the objects
// first, then the text is written again from the masked objects.
func (d *Differ) maskResult(res *Result, sc *scrubber) error {
	var live, predicted map[string]any
	if res.Desired != nil {
		sc.object(res.Desired.Object)
	}
	if res.PredictedLive != nil {
		sc.object(res.PredictedLive.Object)
		predicted = res.PredictedLive.Object
	}
	if res.Live != nil {
		sc.object(res.Live.Object)
		live = res.Live.Object
	}
	if res.Text != "" {
		text, err := unifiedText(res.Key.String(), live, predicted, d.opts.Color, d.opts.ContextLines)
		if err != nil {
			return err
		}
		if len(res.ResetIgnored) > 0 {
			text += resetNote(res.ResetIgnored)
		}
		res.Text = sc.text(text)
	}
	for i := range res.Changes {
		res.Changes[i].Path = sc.text(res.Changes[i].Path)
	}
	for i := range res.ResetIgnored {
		res.ResetIgnored[i] = sc.text(res.ResetIgnored[i])
	}
	res.SchemaFallback = sc.text(res.SchemaFallback)
	if !res.Patch.IsEmpty() {
		res.Patch.masked = []byte(sc.text(string(res.Patch.data)))
	}
	return nil
}
