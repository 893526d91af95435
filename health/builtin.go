package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// checkFunc judges one object of a known kind. It returns nil when it has
// no opinion.
type checkFunc func(obj *unstructured.Unstructured) *Status

// builtinChecks maps each kind with a Go check to it. Group "" is the core
// group. Ingress is served by two groups over the life of Kubernetes.
func builtinChecks() map[schema.GroupKind]checkFunc {
	return map[schema.GroupKind]checkFunc{
		{Group: "apps", Kind: "Deployment"}:                               deploymentHealth,
		{Group: "apps", Kind: "StatefulSet"}:                              statefulSetHealth,
		{Group: "apps", Kind: "DaemonSet"}:                                daemonSetHealth,
		{Group: "apps", Kind: "ReplicaSet"}:                               replicaSetHealth,
		{Group: "", Kind: "Pod"}:                                          podHealth,
		{Group: "", Kind: "PersistentVolumeClaim"}:                        observed(pvcHealth),
		{Group: "", Kind: "Service"}:                                      observed(serviceHealth),
		{Group: "", Kind: "Namespace"}:                                    observed(namespaceHealth),
		{Group: "networking.k8s.io", Kind: "Ingress"}:                     observed(ingressHealth),
		{Group: "extensions", Kind: "Ingress"}:                            observed(ingressHealth),
		{Group: "batch", Kind: "Job"}:                                     observed(jobHealth),
		{Group: "batch", Kind: "CronJob"}:                                 observed(cronJobHealth),
		{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:           observed(hpaHealth),
		{Group: "apiregistration.k8s.io", Kind: "APIService"}:             observed(apiServiceHealth),
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: observed(crdHealth),
		{Group: "policy", Kind: "PodDisruptionBudget"}:                    pdbHealth,
		{Group: "argoproj.io", Kind: "Application"}:                       observed(applicationHealth),
	}
}

// observed wraps a check that does not look at generations itself: while
// status.observedGeneration is set and behind metadata.generation, the
// status describes an older spec, so the object is Progressing whatever
// the rest of the status says. (The workload checks read generations
// themselves, with Argo CD's messages.)
func observed(check checkFunc) checkFunc {
	return func(u *unstructured.Unstructured) *Status {
		if generationBehind(u.Object) {
			return statusf(Progressing, "Waiting for the controller to observe generation %d", u.GetGeneration())
		}
		return check(u)
	}
}

// BuiltinKinds returns the kinds that have a built-in Go check.
func BuiltinKinds() []schema.GroupKind {
	m := builtinChecks()
	out := make([]schema.GroupKind, 0, len(m))
	for gk := range m {
		out = append(out, gk)
	}
	return out
}
