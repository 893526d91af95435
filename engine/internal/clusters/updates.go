package clusters

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
)

// AnnotationIgnoreResourceUpdates is Argo CD's annotation asking that
// ignoreResourceUpdates rules apply to an object no app tracks (a Pod or
// Job a tracked object created).
const AnnotationIgnoreResourceUpdates = "argocd.argoproj.io/ignore-resource-updates"

// AlwaysIgnoredOnUpdates are the fields no watched change is judged by,
// whatever the rules say (Argo CD's reconcile optimisation ignores them
// for every resource): they change on every write, or with the spec,
// which is compared anyway.
func AlwaysIgnoredOnUpdates() []string {
	return []string{"/metadata/resourceVersion", "/metadata/generation", "/metadata/managedFields"}
}

// UpdateIgnorer judges the watched updates of the cluster caches
// (cache.Collaborators.SkipUpdate): an update of an object an app tracks
// (or that carries AnnotationIgnoreResourceUpdates: "true") is dropped
// when, with the ignored fields removed, both versions are equal and their
// health is the same, as Argo CD's reconcile optimisation does.
type UpdateIgnorer struct {
	tracking resource.Tracking
	differ   *diff.Differ
	health   health.Checker
	timeout  time.Duration
}

// NewUpdateIgnorer compiles the ignoreResourceUpdates rules, with
// AlwaysIgnoredOnUpdates added for every resource. Objects are tracked as
// tracking says and their health judged by hc.
func NewUpdateIgnorer(rules []diff.IgnoreRule, tracking resource.Tracking, hc health.Checker) (*UpdateIgnorer, error) {
	all := append([]diff.IgnoreRule{{Group: "*", Kind: "*", JSONPointers: AlwaysIgnoredOnUpdates()}}, rules...)
	dopts := diff.DefaultOptions()
	dopts.SystemIgnoreRules = all
	d, err := diff.New(dopts)
	if err != nil {
		return nil, fmt.Errorf("ignoreResourceUpdates rules: %w", err)
	}
	return &UpdateIgnorer{tracking: tracking, differ: d, health: hc, timeout: 5 * time.Second}, nil
}

// Skip reports whether the update from old to cur needs no refresh. Any
// error (a jq expression that fails on this object, a health script that
// fails) refreshes: a refresh too many is safe, one too few is not.
func (u *UpdateIgnorer) Skip(old, cur *unstructured.Unstructured) bool {
	if u.tracking.AppOf(cur) == "" && cur.GetAnnotations()[AnnotationIgnoreResourceUpdates] != "true" {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), u.timeout)
	defer cancel()
	a, err := u.differ.StripIgnored(ctx, old)
	if err != nil {
		return false
	}
	b, err := u.differ.StripIgnored(ctx, cur)
	if err != nil || !reflect.DeepEqual(a, b) {
		return false
	}
	ha, err1 := health.CheckContext(ctx, u.health, old)
	hb, err2 := health.CheckContext(ctx, u.health, cur)
	if err1 != nil || err2 != nil {
		return false
	}
	return (ha == nil) == (hb == nil) && (ha == nil || ha.Code == hb.Code)
}

// KeepAnnotatedWhole wraps a populate hook so that objects no app tracks
// but that carry AnnotationIgnoreResourceUpdates: "true" are kept whole:
// their updates can then be judged as a tracked object's are.
func KeepAnnotatedWhole(next cache.PopulateFunc) cache.PopulateFunc {
	return func(obj *unstructured.Unstructured, app string) (any, bool) {
		info, whole := next(obj, app)
		if !whole && obj.GetAnnotations()[AnnotationIgnoreResourceUpdates] == "true" {
			whole = true
		}
		return info, whole
	}
}
