package engine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubegitops/gitops/project"
	"github.com/kubegitops/gitops/resource"
)

// maxOrphansNamed bounds the objects an orphan warning names.
const maxOrphansNamed = 5

// orphanCondition reports the objects in the app's destination namespace
// that no application tracks and nothing owns, when the project asks for it
// (orphanedResources with warn: true). Objects every namespace has
// (the default ServiceAccount, kube-root-ca.crt, Endpoints and
// EndpointSlices, which Services derive) and the project's ignore list are
// left out, as in Argo CD.
func (e *Engine) orphanCondition(proj *Project, app *Application, cs *clusterState) *Condition {
	o := proj.Spec.OrphanedResources
	ns := app.Spec.Destination.Namespace
	if o == nil || o.Warn == nil || !*o.Warn || ns == "" {
		return nil
	}
	var orphans []string
	for _, key := range cs.Cache().Namespace(ns) {
		if ignoredOrphan(key, o.Ignore) {
			continue
		}
		obj, ok := cs.Cache().Get(key)
		if !ok || len(obj.GetOwnerReferences()) > 0 || e.opts.Tracking.AppOf(obj) != "" {
			continue
		}
		if _, tracked := obj.GetAnnotations()[e.opts.Tracking.AnnotationKey]; tracked {
			continue // tracked by an app of another instance
		}
		orphans = append(orphans, key.String())
	}
	if len(orphans) == 0 {
		return nil
	}
	sort.Strings(orphans)
	named := orphans
	more := ""
	if len(named) > maxOrphansNamed {
		named, more = named[:maxOrphansNamed], fmt.Sprintf(" and %d more", len(orphans)-maxOrphansNamed)
	}
	return &Condition{Type: ConditionOrphanedResources,
		Message: fmt.Sprintf("%d orphaned resource(s) in namespace %s: %s%s", len(orphans), ns, strings.Join(named, ", "), more)}
}

func ignoredOrphan(key resource.Key, ignore []OrphanedResourceKey) bool {
	switch {
	case key.Group == "" && key.Kind == "ServiceAccount" && key.Name == "default",
		key.Group == "" && key.Kind == "ConfigMap" && key.Name == "kube-root-ca.crt",
		key.Group == "" && key.Kind == "Endpoints",
		key.Group == "discovery.k8s.io" && key.Kind == "EndpointSlice":
		return true
	}
	for _, i := range ignore {
		if project.Glob(orStar(i.Group), key.Group) && project.Glob(orStar(i.Kind), key.Kind) && project.Glob(orStar(i.Name), key.Name) {
			return true
		}
	}
	return false
}

func orStar(s string) string {
	if s == "" {
		return "*"
	}
	return s
}
