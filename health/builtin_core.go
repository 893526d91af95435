package health

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// pvcHealth: phase Bound is Healthy, Pending Progressing, Lost Degraded,
// anything else Unknown.
func pvcHealth(u *unstructured.Unstructured) *Status {
	switch phase := str(u.Object, "status", "phase"); phase {
	case "Bound":
		return &Status{Code: Healthy}
	case "Pending":
		return &Status{Code: Progressing}
	case "Lost":
		return &Status{Code: Degraded, Message: "the volume claim lost its volume"}
	default:
		return statusf(Unknown, "unknown claim phase %q", phase)
	}
}

// serviceHealth: a LoadBalancer Service is Progressing until the cloud
// reports an ingress point; every other Service is Healthy.
func serviceHealth(u *unstructured.Unstructured) *Status {
	if str(u.Object, "spec", "type") != "LoadBalancer" {
		return &Status{Code: Healthy}
	}
	if len(slice(u.Object, "status", "loadBalancer", "ingress")) > 0 {
		return &Status{Code: Healthy}
	}
	return &Status{Code: Progressing, Message: "Waiting for the load balancer to get an address"}
}

// ingressHealth: Progressing until the controller reports an ingress
// point, then Healthy, as Argo CD does.
func ingressHealth(u *unstructured.Unstructured) *Status {
	if len(slice(u.Object, "status", "loadBalancer", "ingress")) > 0 {
		return &Status{Code: Healthy}
	}
	return &Status{Code: Progressing, Message: "Waiting for the ingress controller to assign an address"}
}

// namespaceHealth: Active is Healthy, Terminating Progressing.
func namespaceHealth(u *unstructured.Unstructured) *Status {
	switch str(u.Object, "status", "phase") {
	case "Terminating":
		return &Status{Code: Progressing, Message: "Namespace is terminating"}
	default:
		return &Status{Code: Healthy}
	}
}

// hpaDegraded and hpaHealthy are the condition type/reason pairs Argo CD
// reads: a False condition of a degraded pair is Degraded, a True
// condition of a healthy pair is Healthy; the first match wins.
var (
	hpaDegraded = map[[2]string]bool{
		{"AbleToScale", "FailedGetScale"}:            true,
		{"AbleToScale", "FailedUpdateScale"}:         true,
		{"ScalingActive", "FailedGetResourceMetric"}: true,
		{"ScalingActive", "InvalidSelector"}:         true,
	}
	hpaHealthy = map[[2]string]bool{
		{"AbleToScale", "SucceededRescale"}:      true,
		{"ScalingLimited", "DesiredWithinRange"}: true,
		{"ScalingLimited", "TooFewReplicas"}:     true,
		{"ScalingLimited", "TooManyReplicas"}:    true,
	}
)

// hpaHealth judges an autoscaler by its conditions (status.conditions in
// autoscaling/v2, the autoscaling.alpha.kubernetes.io/conditions
// annotation in v1); without a decisive condition it is Progressing
// "Waiting to Autoscale".
func hpaHealth(u *unstructured.Unstructured) *Status {
	conds := conditions(u.Object)
	if len(conds) == 0 {
		if raw := u.GetAnnotations()["autoscaling.alpha.kubernetes.io/conditions"]; raw != "" {
			var list []map[string]any
			if json.Unmarshal([]byte(raw), &list) == nil {
				for _, m := range list {
					conds = append(conds, condition{Type: str(m, "type"), Status: str(m, "status"), Reason: str(m, "reason"), Message: str(m, "message")})
				}
			}
		}
	}
	for _, c := range conds {
		pair := [2]string{c.Type, c.Reason}
		if c.Status == "False" && hpaDegraded[pair] {
			return &Status{Code: Degraded, Message: c.Message}
		}
		if c.Status == "True" && hpaHealthy[pair] {
			return &Status{Code: Healthy, Message: c.Message}
		}
	}
	return &Status{Code: Progressing, Message: "Waiting to Autoscale"}
}

// apiServiceHealth: the Available condition decides: True is Healthy, False
// Progressing with its reason; without it, Progressing.
func apiServiceHealth(u *unstructured.Unstructured) *Status {
	c, ok := findCondition(conditions(u.Object), "Available")
	switch {
	case !ok:
		return &Status{Code: Progressing, Message: "Waiting to be processed"}
	case c.Status == "True":
		return &Status{Code: Healthy, Message: c.Message}
	default:
		return statusf(Progressing, "%s: %s", c.Reason, c.Message)
	}
}

// crdHealth: a CustomResourceDefinition is Degraded when its names are not
// accepted, it is not Established, or its schema is not structural;
// Progressing while terminating or without conditions; Healthy once
// Established with accepted names.
func crdHealth(u *unstructured.Unstructured) *Status {
	conds := conditions(u.Object)
	if len(conds) == 0 {
		return &Status{Code: Progressing, Message: "Status conditions not found"}
	}
	if c, ok := findCondition(conds, "Terminating"); ok && c.Status == "True" {
		return &Status{Code: Progressing, Message: "CRD is terminating: " + c.Message}
	}
	if c, ok := findCondition(conds, "NamesAccepted"); ok && c.Status == "False" {
		return &Status{Code: Degraded, Message: "CRD names have not been accepted: " + c.Message}
	}
	if c, ok := findCondition(conds, "NonStructuralSchema"); ok && c.Status == "True" {
		return &Status{Code: Degraded, Message: "Schema violations found: " + c.Message}
	}
	c, ok := findCondition(conds, "Established")
	switch {
	case ok && c.Status == "True":
		return &Status{Code: Healthy, Message: "CRD is healthy"}
	case ok && c.Status == "False":
		return &Status{Code: Degraded, Message: "CRD is not established: " + c.Message}
	default:
		return &Status{Code: Progressing, Message: "Waiting for the CRD to be established"}
	}
}

// pdbHealth follows Argo CD: a budget is a policy, not a workload, so it
// is not Degraded because its pods are few (that is their own health, and
// a budget created with its Deployment would otherwise fail the first sync
// before any pod exists):
//   - not yet observed by the disruption controller: Progressing;
//   - its DisruptionAllowed condition False for a reason other than
//     InsufficientPods (the controller could not compute it, SyncFailed):
//     Degraded with the condition's message;
//   - otherwise Healthy, saying when no disruption is allowed because too
//     few pods are healthy (InsufficientPods).
func pdbHealth(u *unstructured.Unstructured) *Status {
	obj := u.Object
	if _, ok := num(obj, "status", "observedGeneration"); !ok || generationBehind(obj) {
		return &Status{Code: Progressing, Message: "Waiting for the disruption controller to observe the budget"}
	}
	current, desired := num0(obj, "status", "currentHealthy"), num0(obj, "status", "desiredHealthy")
	if c, ok := findCondition(conditions(obj), "DisruptionAllowed"); ok && c.Status == "False" && c.Reason != "InsufficientPods" {
		return statusf(Degraded, "PodDisruptionBudget cannot be computed (%s): %s", c.Reason, c.Message)
	}
	if current < desired {
		return statusf(Healthy, "PodDisruptionBudget has InsufficientPods: %d of %d desired healthy pods are healthy, no disruption allowed", current, desired)
	}
	return statusf(Healthy, "%d healthy pods, %d disruptions allowed", current, num0(obj, "status", "disruptionsAllowed"))
}

// applicationHealth reads a child Argo CD Application's own health from
// status.health; without one it is Progressing.
func applicationHealth(u *unstructured.Unstructured) *Status {
	code := Code(str(u.Object, "status", "health", "status"))
	if code == "" {
		return &Status{Code: Progressing}
	}
	if !code.Valid() {
		return statusf(Unknown, "child application reports an invalid health status %q", code)
	}
	return &Status{Code: code, Message: str(u.Object, "status", "health", "message")}
}
