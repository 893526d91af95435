package resource

// BuiltinClusterScoped reports whether kind is one of the built-in
// Kubernetes kinds that are cluster-scoped (those Kubernetes 1.37's API
// server serves; the engine's TestBuiltinScopesMatchTheCluster checks the
// list against the local cluster's discovery). It is for code that has no
// discovery to ask (offline renders): a connected caller asks the API
// server instead, which also knows custom resources.
func BuiltinClusterScoped(kind string) bool {
	switch kind {
	case "Namespace", "Node", "ComponentStatus", "PersistentVolume",
		"ClusterRole", "ClusterRoleBinding",
		"CustomResourceDefinition", "APIService",
		"StorageClass", "CSIDriver", "CSINode", "VolumeAttachment", "VolumeAttributesClass", "StorageVersionMigration",
		"PriorityClass", "RuntimeClass", "IngressClass", "IPAddress", "ServiceCIDR",
		"CertificateSigningRequest", "ClusterTrustBundle",
		"FlowSchema", "PriorityLevelConfiguration", "StorageVersion",
		"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
		"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding",
		"DeviceClass", "ResourceSlice", "DeviceTaintRule",
		"TokenReview", "SelfSubjectReview", "SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview":
		return true
	}
	return false
}
