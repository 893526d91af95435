package rbac

import "strings"

// Resources of Argo CD's RBAC (the second field of a p line).
const (
	ResourceApplications      = "applications"
	ResourceApplicationSets   = "applicationsets"
	ResourceLogs              = "logs"
	ResourceExec              = "exec"
	ResourceProjects          = "projects"
	ResourceClusters          = "clusters"
	ResourceRepositories      = "repositories"
	ResourceWriteRepositories = "write-repositories"
	ResourceCertificates      = "certificates"
	ResourceAccounts          = "accounts"
	ResourceGPGKeys           = "gpgkeys"
	ResourceExtensions        = "extensions"
)

// knownResources are the resources a policy line's resource pattern must
// match at least one of; a pattern that matches none is a typo.
func knownResources() []string {
	return []string{
		ResourceApplications, ResourceApplicationSets, ResourceLogs, ResourceExec,
		ResourceProjects, ResourceClusters, ResourceRepositories, ResourceWriteRepositories,
		ResourceCertificates, ResourceAccounts, ResourceGPGKeys, ResourceExtensions,
	}
}

// Actions of Argo CD's RBAC (the third field of a p line). Resource
// actions are "action/<group>/<kind>/<name>" (see ResourceAction);
// "update/..." and "delete/..." name one managed resource of an app
// ("update/<group>/<kind>/<namespace>/<name>").
const (
	ActionGet      = "get"
	ActionCreate   = "create"
	ActionUpdate   = "update"
	ActionDelete   = "delete"
	ActionSync     = "sync"
	ActionOverride = "override"
	ActionRollback = "rollback"
	ActionAction   = "action"
	ActionDebug    = "debug"
	ActionInvoke   = "invoke"
)

// ResourceAction is the action of running a resource action on an app's
// resource: "action/<group>/<kind>/<name>", with an empty group for the
// core API ("action//Pod/restart").
func ResourceAction(group, kind, name string) string {
	return ActionAction + "/" + group + "/" + kind + "/" + name
}

// AppObject is the object of an application (and of its logs and exec) in
// a request: "<project>/<app>", or "<project>/<namespace>/<app>" when the
// app lives in a namespace other than the control plane's (apps in any
// namespace). An empty project is Argo CD's "default".
func AppObject(project, namespace, name, controlNamespace string) string {
	if project == "" {
		project = "default"
	}
	if namespace != "" && controlNamespace != "" && namespace != controlNamespace {
		return project + "/" + namespace + "/" + name
	}
	return project + "/" + name
}

// AppSetObject is the object of an ApplicationSet in a request: its
// template's project, then as AppObject ("<project>/<appset>" or
// "<project>/<namespace>/<appset>").
func AppSetObject(templateProject, namespace, name, controlNamespace string) string {
	return AppObject(templateProject, namespace, name, controlNamespace)
}

// projectOf returns the project a request is about, as Argo CD's API
// server finds it: the first segment of the object of applications,
// applicationsets, logs, exec, repositories and clusters (when the object
// has one "/" or more), and the object itself for projects.
func projectOf(resource, object string) (string, bool) {
	switch resource {
	case ResourceApplications, ResourceApplicationSets, ResourceLogs, ResourceExec,
		ResourceRepositories, ResourceClusters:
		if p, _, ok := strings.Cut(object, "/"); ok {
			return p, true
		}
	case ResourceProjects:
		return object, true
	}
	return "", false
}

// projectSubject splits a project role subject "proj:<project>:<role>".
func projectSubject(subject string) (project, role string, ok bool) {
	parts := strings.Split(subject, ":")
	if len(parts) == 3 && parts[0] == "proj" {
		return parts[1], parts[2], true
	}
	return "", "", false
}
