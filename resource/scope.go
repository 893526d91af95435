package resource

// BuiltinClusterScoped reports whether kind is one of the built-in
// Kubernetes kinds that are cluster-scoped. It is for code that has no
// discovery to ask (offline renders): a connected caller asks the API
// server instead, which also knows custom resources.
func BuiltinClusterScoped(kind string) bool {
	switch kind {
	case "Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "PersistentVolume", "StorageClass",
		"PriorityClass", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "APIService", "IngressClass", "RuntimeClass":
		return true
	}
	return false
}
