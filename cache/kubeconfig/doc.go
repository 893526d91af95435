// Package kubeconfig reads the contexts of a kubeconfig file into client
// configs (Load): a host with several clusters builds one destination,
// or one cluster cache, per context (gitops.ClustersFromKubeconfig). A
// Context never prints, formats or marshals its credentials.
//
// It lives apart from package cache so that the engine, which is given
// rest.Configs, does not build client-go's kubeconfig loader
// (k8s.io/client-go/tools/clientcmd).
package kubeconfig
