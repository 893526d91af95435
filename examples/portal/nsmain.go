package main

import (
	"context"
	"errors"
	"io"

	"github.com/kubegitops/gitops"
	"k8s.io/client-go/kubernetes"
)

// checkNamespaceFlags refuses the flags --namespace replaces: the
// namespace's own AppProjects and cluster Secrets are read, as the
// operator reads them.
func checkNamespaceFlags(f flags) error {
	switch {
	case f.apps != "":
		return errors.New("--apps and --namespace exclude each other: the portal serves the Applications of one of them")
	case f.projects != "" || f.projectsNS != "":
		return errors.New("--projects and --projects-namespace do not go with --namespace: the portal reads the AppProjects of --namespace, as the operator does")
	case f.clusterSecretsNS != "":
		return errors.New("--cluster-secrets-namespace does not go with --namespace: the portal reads the cluster Secrets of --namespace, as the operator does")
	}
	return nil
}

// openNamespaceOptions opens namespace ns (--namespace) through the
// kubeconfig's first cluster and sets the engine's options from it: its
// cluster Secrets merged over clusters, its AppProjects, its repository
// Secrets as credentials. It returns the backend, the namespace's
// Applications and the AppProjects that did not load, by name.
func openNamespaceOptions(ctx context.Context, ns string, clusters []gitops.ClusterConfig, kube kubernetes.Interface, opts *gitops.Options, log io.Writer) (*nsBackend, []*gitops.Application, map[string]error, error) {
	b, err := openNamespace(ctx, clusters[0].Config, kube, ns, clusters, log)
	if err != nil {
		return nil, nil, nil, err
	}
	apps, err := b.apps(ctx)
	if err != nil {
		b.close()
		return nil, nil, nil, err
	}
	ps := b.projects.Load()
	opts.Clusters = b.clusters(ctx)
	opts.Projects = ps.loaded
	opts.ProjectCredentials = b.creds.ForProject
	return b, apps, ps.refused, nil
}
