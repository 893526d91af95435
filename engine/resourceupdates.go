package engine

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

// AlwaysIgnoredOnUpdates are the fields no watched change is judged by,
// whatever Options.IgnoreResourceUpdates says (Argo CD's reconcile
// optimisation ignores them for every resource): they change on every
// write, or with the spec, which is compared anyway.
func AlwaysIgnoredOnUpdates() []string {
	return []string{"/metadata/resourceVersion", "/metadata/generation", "/metadata/managedFields"}
}

// AnnotationIgnoreResourceUpdates is Argo CD's annotation asking that
// ignoreResourceUpdates rules apply to an object no app tracks (a Pod or
// Job a tracked object created).
const AnnotationIgnoreResourceUpdates = "argocd.argoproj.io/ignore-resource-updates"

// DefaultIgnoreResourceUpdates returns Argo CD 3's default
// ignoreResourceUpdates rules, keyed as argocd-cm keys them after
// resource.customizations.ignoreResourceUpdates. ("all", "group_Kind" or
// "Kind"): status everywhere, and the annotations and fields controllers
// rewrite on Applications, Rollouts, HPAs, ConfigMaps, ReplicaSets,
// Endpoints and EndpointSlices. A key argocd-cm sets replaces that key's
// default, and only that one.
func DefaultIgnoreResourceUpdates() map[string]ResourceIgnoreDifferences {
	ann := func(names ...string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = fmt.Sprintf(".metadata.annotations.%q", n)
		}
		return out
	}
	return map[string]ResourceIgnoreDifferences{
		"all": {Group: "*", Kind: "*", JSONPointers: []string{"/status"}},
		"argoproj.io_Application": {Group: "argoproj.io", Kind: "Application", JQPathExpressions: append(ann(
			"notified.notifications.argoproj.io", "argocd.argoproj.io/refresh", "argocd.argoproj.io/hydrate"), ".operation")},
		"argoproj.io_Rollout": {Group: "argoproj.io", Kind: "Rollout", JQPathExpressions: ann("notified.notifications.argoproj.io")},
		"autoscaling_HorizontalPodAutoscaler": {Group: "autoscaling", Kind: "HorizontalPodAutoscaler", JQPathExpressions: ann(
			"autoscaling.alpha.kubernetes.io/behavior", "autoscaling.alpha.kubernetes.io/conditions",
			"autoscaling.alpha.kubernetes.io/metrics", "autoscaling.alpha.kubernetes.io/current-metrics")},
		"ConfigMap": {Kind: "ConfigMap", JQPathExpressions: ann(
			"cluster-autoscaler.kubernetes.io/last-updated", "control-plane.alpha.kubernetes.io/leader")},
		"apps_ReplicaSet": {Group: "apps", Kind: "ReplicaSet", JQPathExpressions: ann(
			"deployment.kubernetes.io/desired-replicas", "deployment.kubernetes.io/max-replicas", "rollout.argoproj.io/desired-replicas")},
		"discovery.k8s.io_EndpointSlice": {Group: "discovery.k8s.io", Kind: "EndpointSlice", JSONPointers: []string{"/metadata", "/endpoints", "/ports"}},
		"Endpoints":                      {Kind: "Endpoints", JSONPointers: []string{"/metadata", "/subsets"}},
	}
}

// updateIgnorer judges the watched updates of the cluster caches
// (cache.Collaborators.SkipUpdate): an update of an object an app tracks (or
// that carries AnnotationIgnoreResourceUpdates: "true") is dropped when,
// with the ignored fields removed, both versions are equal and their
// health is the same, as Argo CD's reconcile optimisation does.
type updateIgnorer struct {
	tracking resource.Tracking
	differ   *diff.Differ
	health   health.Checker
	timeout  time.Duration
}

// newUpdateIgnorer compiles opts.IgnoreResourceUpdates, or returns nil
// when it is nil (every update refreshes).
func newUpdateIgnorer(opts Options, hc health.Checker) (*updateIgnorer, error) {
	if opts.IgnoreResourceUpdates == nil {
		return nil, nil
	}
	rules := []diff.IgnoreRule{{Group: "*", Kind: "*", JSONPointers: AlwaysIgnoredOnUpdates()}}
	for _, r := range opts.IgnoreResourceUpdates {
		rules = append(rules, diff.IgnoreRule{Group: r.Group, Kind: r.Kind, Name: r.Name, Namespace: r.Namespace,
			JSONPointers: r.JSONPointers, JQPathExpressions: r.JQPathExpressions, ManagedFieldsManagers: r.ManagedFieldsManagers})
	}
	dopts := diff.DefaultOptions()
	dopts.SystemIgnoreRules = rules
	d, err := diff.New(dopts)
	if err != nil {
		return nil, fmt.Errorf("gitops: Options.IgnoreResourceUpdates: %w", err)
	}
	return &updateIgnorer{tracking: opts.Tracking, differ: d, health: hc, timeout: 5 * time.Second}, nil
}

// skip reports whether the update from old to cur needs no refresh. Any
// error (a jq expression that fails on this object, a health script that
// fails) refreshes: a refresh too many is safe, one too few is not.
func (u *updateIgnorer) skip(old, cur *unstructured.Unstructured) bool {
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

// keepAnnotatedWhole wraps a populate hook so that objects no app tracks
// but that carry AnnotationIgnoreResourceUpdates: "true" are kept whole:
// their updates can then be judged as a tracked object's are.
func keepAnnotatedWhole(next cache.PopulateFunc) cache.PopulateFunc {
	return func(obj *unstructured.Unstructured, app string) (any, bool) {
		info, whole := next(obj, app)
		if !whole && obj.GetAnnotations()[AnnotationIgnoreResourceUpdates] == "true" {
			whole = true
		}
		return info, whole
	}
}
