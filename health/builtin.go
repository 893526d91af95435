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
		{Group: "", Kind: "PersistentVolumeClaim"}:                        pvcHealth,
		{Group: "", Kind: "Service"}:                                      serviceHealth,
		{Group: "", Kind: "Namespace"}:                                    namespaceHealth,
		{Group: "networking.k8s.io", Kind: "Ingress"}:                     ingressHealth,
		{Group: "extensions", Kind: "Ingress"}:                            ingressHealth,
		{Group: "batch", Kind: "Job"}:                                     jobHealth,
		{Group: "batch", Kind: "CronJob"}:                                 cronJobHealth,
		{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:           hpaHealth,
		{Group: "apiregistration.k8s.io", Kind: "APIService"}:             apiServiceHealth,
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: crdHealth,
		{Group: "policy", Kind: "PodDisruptionBudget"}:                    pdbHealth,
		{Group: "argoproj.io", Kind: "Application"}:                       applicationHealth,
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
