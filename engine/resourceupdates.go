package engine

import (
	"fmt"

	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/engine/internal/clusters"
	"github.com/kubegitops/gitops/health"
)

// AlwaysIgnoredOnUpdates are the fields no watched change is judged by,
// whatever Options.IgnoreResourceUpdates says (Argo CD's reconcile
// optimisation ignores them for every resource): they change on every
// write, or with the spec, which is compared anyway.
func AlwaysIgnoredOnUpdates() []string { return clusters.AlwaysIgnoredOnUpdates() }

// AnnotationIgnoreResourceUpdates is Argo CD's annotation asking that
// ignoreResourceUpdates rules apply to an object no app tracks (a Pod or
// Job a tracked object created).
const AnnotationIgnoreResourceUpdates = clusters.AnnotationIgnoreResourceUpdates

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

// newUpdateIgnorer compiles opts.IgnoreResourceUpdates into the judge of
// the cluster caches' watched updates (clusters.UpdateIgnorer), or returns
// nil when it is nil (every update refreshes).
func newUpdateIgnorer(opts Options, hc health.Checker) (*clusters.UpdateIgnorer, error) {
	if opts.IgnoreResourceUpdates == nil {
		return nil, nil
	}
	rules := make([]diff.IgnoreRule, 0, len(opts.IgnoreResourceUpdates))
	for _, r := range opts.IgnoreResourceUpdates {
		rules = append(rules, diff.IgnoreRule{Group: r.Group, Kind: r.Kind, Name: r.Name, Namespace: r.Namespace,
			JSONPointers: r.JSONPointers, JQPathExpressions: r.JQPathExpressions, ManagedFieldsManagers: r.ManagedFieldsManagers})
	}
	u, err := clusters.NewUpdateIgnorer(rules, opts.Tracking, hc)
	if err != nil {
		return nil, fmt.Errorf("gitops: Options.IgnoreResourceUpdates: %w", err)
	}
	return u, nil
}
