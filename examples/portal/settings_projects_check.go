package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/project"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// validateProject loads u with the model's strict loader, as the
// portal and the operator read it: a project that would not load is a
// 400 with why.
func validateProject(u *unstructured.Unstructured) (*gitops.Project, error) {
	loaded, refused := decodeProjects([]*unstructured.Unstructured{u})
	if len(refused) > 0 || len(loaded) != 1 {
		return nil, badSetting("%v", refused[u.GetName()])
	}
	return &loaded[0], nil
}

// invalidatedApps refuses a project update that would leave apps of the
// project with a source or a destination the project permitted before and
// does not any more, as Argo CD's project update does (its message).
func (s *server) invalidatedApps(prev, next *gitops.Project) error {
	names := *s.clusterNames.Load()
	srcN, dstN := 0, 0
	for _, appName := range s.appNames() {
		a, ok := s.app(appName)
		if !ok || projectOf(a) != next.Name {
			continue
		}
		for _, src := range a.Spec.AllSources() {
			if project.CheckSource(prev, src.RepoURL) == nil && project.CheckSource(next, src.RepoURL) != nil {
				srcN++
				break
			}
		}
		d := a.Spec.Destination
		server, name := d.Server, d.Name
		for srv, n := range names {
			if server == "" && n == name {
				server = srv
			}
		}
		if name == "" {
			name = names[server]
		}
		if project.CheckDestination(prev, server, name, d.Namespace) == nil && project.CheckDestination(next, server, name, d.Namespace) != nil {
			dstN++
		}
	}
	var parts []string
	if srcN > 0 {
		parts = append(parts, fmt.Sprintf("%d applications source became invalid", srcN))
	}
	if dstN > 0 {
		parts = append(parts, fmt.Sprintf("%d applications destination became invalid", dstN))
	}
	if len(parts) > 0 {
		return badSetting("AppProject %s: as a result of project update %s", next.Name, strings.Join(parts, " and "))
	}
	return nil
}

// newEntries are the items of next that prev does not hold.
func newEntries(next, prev []string) []string {
	var out []string
	for _, n := range next {
		if !slices.Contains(prev, n) {
			out = append(out, n)
		}
	}
	return out
}

// destinationClusters are the servers and cluster names of dests.
func destinationClusters(dests []destination) []string {
	out := make([]string, 0, len(dests))
	for _, d := range dests {
		out = append(out, d.Server+d.Name)
	}
	return out
}
