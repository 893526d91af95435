package project

import (
	"fmt"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// ScopedCluster is a destination cluster scoped to a project: Argo CD's
// project-scoped cluster, a cluster Secret whose project key names the
// project.
type ScopedCluster struct {
	// Name and Server are the names Applications give the cluster.
	Name, Server string
	// Namespaces are the namespaces the cluster may be managed in (its
	// Secret's namespaces key); empty for all.
	Namespaces []string
}

// WithScopedClusters returns the project as Argo CD evaluates it with the
// clusters scoped to it: its destinations, plus, for each such cluster,
// the cluster (its server and its name, since Argo CD matches a
// destination resolved to both) with each of its namespaces, or with "*"
// when it lists none (Argo CD's implicit destinations, which the
// AppProject's spec does not show). Without clusters it returns p;
// otherwise a copy, p is not modified.
func WithScopedClusters(p *v1alpha1.AppProject, clusters []ScopedCluster) *v1alpha1.AppProject {
	if len(clusters) == 0 {
		return p
	}
	out := p.DeepCopy()
	for _, c := range clusters {
		if len(c.Namespaces) == 0 {
			out.Spec.Destinations = append(out.Spec.Destinations, v1alpha1.ApplicationDestination{Server: c.Server, Name: c.Name, Namespace: "*"})
			continue
		}
		for _, ns := range c.Namespaces {
			out.Spec.Destinations = append(out.Spec.Destinations, v1alpha1.ApplicationDestination{Server: c.Server, Name: c.Name, Namespace: ns})
		}
	}
	return out
}

// CheckScopedCluster applies permitOnlyProjectScopedClusters: when the
// project sets it, the app's destination cluster (server and name, as the
// destination resolves) must be one of clusters, the clusters scoped to
// the project, by name or by server, as Argo CD's IsDestinationPermitted
// decides. The refusal's message is Argo CD's for a destination the
// project does not allow, naming the server, or the cluster's name when
// dest names it. Without the setting it returns nil.
func CheckScopedCluster(p *v1alpha1.AppProject, clusters []ScopedCluster, dest v1alpha1.ApplicationDestination, server, name string) error {
	if !p.Spec.PermitOnlyProjectScopedClusters {
		return nil
	}
	for _, c := range clusters {
		if (name != "" && c.Name == name) || (server != "" && c.Server == server) {
			return nil
		}
	}
	shown := server
	if dest.Name != "" {
		shown = name
	}
	return &PolicyError{Project: p.Name, Rule: "permitOnlyProjectScopedClusters", Subject: destString(server, name, dest.Namespace),
		Reason: "the cluster is not scoped to the project",
		Message: fmt.Sprintf("application destination server '%s' and namespace '%s' do not match any of the allowed destinations in project '%s'",
			shown, dest.Namespace, p.Name)}
}
