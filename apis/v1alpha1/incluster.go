package v1alpha1

// The cluster Argo CD runs in, as its Applications and cluster Secrets name
// it (Argo CD's constants of the same names).
const (
	// KubernetesInternalAPIServerAddr is the destination server of the
	// cluster the controller runs in: the API server's in-cluster address.
	KubernetesInternalAPIServerAddr = "https://kubernetes.default.svc"
	// KubernetesInClusterName is the destination name of that cluster.
	KubernetesInClusterName = "in-cluster"
)
