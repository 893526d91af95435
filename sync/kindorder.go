package sync

import "k8s.io/apimachinery/pkg/runtime/schema"

// kindOrder is the order of kinds within one phase and wave: Helm's and Argo
// CD's list, so that charts and apps written for them behave the same, but
// matched on group and kind so that a custom resource that happens to be
// called "Service" is not mistaken for a core Service. Kinds not listed (most
// custom resources) come after all listed ones, then webhook configurations
// last: a webhook registered before the Service behind it would block every
// later write of the sync.
var kindOrder = []schema.GroupKind{
	{Kind: "Namespace"},
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"},
	{Kind: "ResourceQuota"},
	{Kind: "LimitRange"},
	{Group: "policy", Kind: "PodSecurityPolicy"},
	{Group: "policy", Kind: "PodDisruptionBudget"},
	{Kind: "ServiceAccount"},
	{Kind: "Secret"},
	{Kind: "SecretList"},
	{Kind: "ConfigMap"},
	{Group: "storage.k8s.io", Kind: "StorageClass"},
	{Kind: "PersistentVolume"},
	{Kind: "PersistentVolumeClaim"},
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleList"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBindingList"},
	{Group: "rbac.authorization.k8s.io", Kind: "Role"},
	{Group: "rbac.authorization.k8s.io", Kind: "RoleList"},
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"},
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBindingList"},
	{Kind: "Service"},
	{Group: "apps", Kind: "DaemonSet"},
	{Kind: "Pod"},
	{Kind: "ReplicationController"},
	{Group: "apps", Kind: "ReplicaSet"},
	{Group: "apps", Kind: "Deployment"},
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"},
	{Group: "apps", Kind: "StatefulSet"},
	{Group: "batch", Kind: "Job"},
	{Group: "batch", Kind: "CronJob"},
	{Group: "networking.k8s.io", Kind: "IngressClass"},
	{Group: "networking.k8s.io", Kind: "Ingress"},
	{Group: "apiregistration.k8s.io", Kind: "APIService"},
}

var lastKinds = map[schema.GroupKind]bool{
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: true,
}

var kindIndex = func() map[schema.GroupKind]int {
	m := make(map[schema.GroupKind]int, len(kindOrder))
	for i, gk := range kindOrder {
		m[gk] = i - len(kindOrder) // listed kinds are negative, unlisted 0
	}
	return m
}()

// kindRank orders group-kinds: listed kinds by the list, then unlisted kinds
// (0), then webhook configurations (1).
func kindRank(gk schema.GroupKind) int {
	if lastKinds[gk] {
		return 1
	}
	if i, ok := kindIndex[gk]; ok {
		return i
	}
	if gk.Group == "extensions" { // manifests still written against the old group sort as the new

		for _, g := range []string{"apps", "networking.k8s.io", "policy"} {
			if i, ok := kindIndex[schema.GroupKind{Group: g, Kind: gk.Kind}]; ok {
				return i
			}
		}
	}
	return 0
}
