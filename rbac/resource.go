package rbac

// ResourceSubAction is the action of updating or deleting one resource of
// an application, Argo CD 3's fine-grained permission:
// "<action>/<group>/<kind>/<namespace>/<name>", with an empty group for
// the core API and an empty namespace for a cluster-scoped resource
// ("delete//Pod/web/web-0", "update/apps/Deployment/web/web").
func ResourceSubAction(action, group, kind, namespace, name string) string {
	return action + "/" + group + "/" + kind + "/" + namespace + "/" + name
}

// DecideResource decides action (ActionUpdate or ActionDelete) on one
// resource of the application whose object is appObject (AppObject), as
// Argo CD 3's API server does for deleting or patching a resource:
//
//   - by default it decides "applications, <action>/<group>/<kind>/<namespace>/<name>"
//     only: update and delete on the application itself do not reach its
//     resources;
//   - with EnforcerOptions.ResourceInheritance (argocd-cm's
//     server.rbac.disableApplicationFineGrainedRBACInheritance "false"),
//     "applications, <action>" on the application is checked first and
//     grants it; only when that is refused the fine-grained action is
//     decided.
//
// Other actions are decided on the application (Decide).
func (e *Enforcer) DecideResource(s Subject, action, appObject, group, kind, namespace, name string) Decision {
	if action != ActionUpdate && action != ActionDelete {
		return e.Decide(s, ResourceApplications, action, appObject)
	}
	if e.opts.ResourceInheritance {
		if d := e.Decide(s, ResourceApplications, action, appObject); d.Allowed {
			return d
		}
	}
	return e.Decide(s, ResourceApplications, ResourceSubAction(action, group, kind, namespace, name), appObject)
}
