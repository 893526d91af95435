package project

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrPolicy is wrapped by every *PolicyError.
var ErrPolicy = errors.New("refused by policy")

// PolicyError says which rule refused what: a source, a destination or an
// object. The refusals of an AppProject's own rules carry Argo CD's
// message for them (Message), which Error returns.
type PolicyError struct {
	// Project is the project (or policy) whose rule refused.
	Project string
	// Rule names the rule, for example "destinations",
	// "clusterResourceBlacklist" or a policy rule's name.
	Rule string
	// Subject is what was refused: a repository URL, a destination, an
	// object key.
	Subject string
	// Reason explains, for people.
	Reason string
	// Message, when set, is Argo CD's message for this refusal ("resource
	// :Namespace is not permitted in project my-project"), which Error
	// returns so that people see what Argo CD shows them.
	Message string
}

// Error implements error: Message when set, else "<subject> refused by
// project <p> (<rule>): <reason>".
func (e *PolicyError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("%s refused by project %s (%s): %s", e.Subject, e.Project, e.Rule, e.Reason)
}

// Unwrap makes errors.Is(err, ErrPolicy) hold.
func (e *PolicyError) Unwrap() error { return ErrPolicy }

// Policy is an extension point for a host's own checks of (application,
// object) pairs, run with the project's limits before anything is written.
// Check returns nil to allow the object.
type Policy interface {
	Check(ctx context.Context, app *v1alpha1.Application, obj *unstructured.Unstructured) error
}

// CheckSource refuses a repository the project's sourceRepos do not permit
// (SourcePermitted: globs with '/' as separator, "!" deny patterns; "*"
// allows any).
func CheckSource(p *v1alpha1.AppProject, repoURL string) error {
	if SourcePermitted(p.Spec.SourceRepos, repoURL) {
		return nil
	}
	return &PolicyError{Project: p.Name, Rule: "sourceRepos", Subject: "repository " + repoURL, Reason: "not among the project's source repositories",
		Message: fmt.Sprintf("application repo %s is not permitted in project '%s'", repoURL, p.Name)}
}

// CheckSourceNamespace refuses an Application that lives in a namespace
// the project does not serve, as Argo CD's apps in any namespace do: an
// Application in the control plane's namespace (controlNamespace), or in
// none (a file), may use any project; one in another namespace only a
// project whose sourceNamespaces match it (NamespacePermitted: globs and
// regular expressions between slashes).
func CheckSourceNamespace(p *v1alpha1.AppProject, appNamespace, controlNamespace string) error {
	if appNamespace == "" || appNamespace == controlNamespace || NamespacePermitted(p.Spec.SourceNamespaces, appNamespace) {
		return nil
	}
	return &PolicyError{Project: p.Name, Rule: "sourceNamespaces", Subject: "Application namespace " + appNamespace,
		Reason: "not among the namespaces whose Applications may use the project"}
}

// CheckDestination refuses a cluster (by server URL or name) and namespace
// the project does not allow: a destination is allowed when it matches an
// entry without "!" and no entry with "!" (in server, name or namespace).
// An empty namespace stands for cluster-scoped objects and matches entries
// whose namespace pattern is "*". The refusal's message is Argo CD's for
// an application's destination (naming the server, or the name when no
// server is given).
func CheckDestination(p *v1alpha1.AppProject, server, name, namespace string) error {
	allowed := false
	refuse := func(reason string) error {
		cluster := server
		if cluster == "" {
			cluster = name
		}
		return &PolicyError{Project: p.Name, Rule: "destinations", Subject: destString(server, name, namespace), Reason: reason,
			Message: fmt.Sprintf("application destination server '%s' and namespace '%s' do not match any of the allowed destinations in project '%s'", cluster, namespace, p.Name)}
	}
	for _, d := range p.Spec.Destinations {
		deny := strings.HasPrefix(d.Server, "!") || strings.HasPrefix(d.Name, "!") || strings.HasPrefix(d.Namespace, "!")
		if !destinationMatches(d, server, name, namespace) {
			continue
		}
		if deny {
			return refuse(fmt.Sprintf("denied by destination %s", destString(d.Server, d.Name, d.Namespace)))
		}
		allowed = true
	}
	if !allowed {
		return refuse("not among the project's destinations")
	}
	return nil
}

func destinationMatches(d v1alpha1.ApplicationDestination, server, name, namespace string) bool {
	// A "!" entry matches what it denies; the caller decides what a match
	// of a "!" entry means.
	match := func(pattern, value string) bool { return Glob(strings.TrimPrefix(pattern, "!"), value) }
	clusterOK := (d.Server != "" && match(d.Server, server)) || (d.Name != "" && name != "" && match(d.Name, name))
	if !clusterOK {
		return false
	}
	ns := d.Namespace
	if ns == "" {
		ns = "*"
	}
	return match(ns, namespace)
}

func destString(server, name, namespace string) string {
	cluster := server
	if cluster == "" {
		cluster = name
	}
	if namespace == "" {
		return "cluster " + cluster
	}
	return fmt.Sprintf("namespace %s on cluster %s", namespace, cluster)
}

func gkMatches(list []metav1.GroupKind, gk schema.GroupKind) bool {
	for _, e := range list {
		if Glob(e.Group, gk.Group) && Glob(e.Kind, gk.Kind) {
			return true
		}
	}
	return false
}

// CheckObject refuses an object the project's limits do not allow on the
// app's destination: a namespaced object must live in an allowed namespace
// of the destination cluster (whatever namespace its manifest names) and be
// of an allowed namespaced kind; a cluster-scoped object must match an
// entry of clusterResourceWhitelist and none of clusterResourceBlacklist,
// by group, kind and, where the entry names one, name (none is allowed
// when the whitelist is empty, as in Argo CD). Refusals carry Argo CD's
// messages ("resource <group>:<kind> is not permitted in project <p>",
// "namespace <ns> is not permitted in project '<p>'").
func CheckObject(p *v1alpha1.AppProject, dest v1alpha1.ApplicationDestination, obj *unstructured.Unstructured, namespaced bool) error {
	key := resource.KeyOf(obj)
	gk := key.GroupKind()
	refuse := func(rule, reason string) error {
		return &PolicyError{Project: p.Name, Rule: rule, Subject: key.String(), Reason: reason,
			Message: fmt.Sprintf("resource %s:%s is not permitted in project %s", gk.Group, gk.Kind, p.Name)}
	}
	if !namespaced {
		if !ClusterResourceListed(p.Spec.ClusterResourceWhitelist, gk, key.Name) {
			return refuse("clusterResourceWhitelist", "cluster-scoped "+key.String()+" is not allowed")
		}
		if ClusterResourceListed(p.Spec.ClusterResourceBlacklist, gk, key.Name) {
			return refuse("clusterResourceBlacklist", "cluster-scoped "+key.String()+" is denied")
		}
		return nil
	}
	if len(p.Spec.NamespaceResourceWhitelist) > 0 && !gkMatches(p.Spec.NamespaceResourceWhitelist, gk) {
		return refuse("namespaceResourceWhitelist", "kind "+gk.String()+" is not allowed")
	}
	if gkMatches(p.Spec.NamespaceResourceBlacklist, gk) {
		return refuse("namespaceResourceBlacklist", "kind "+gk.String()+" is denied")
	}
	ns := key.Namespace
	if ns == "" {
		ns = dest.Namespace
	}
	if err := CheckDestination(p, dest.Server, dest.Name, ns); err != nil {
		var pe *PolicyError
		if errors.As(err, &pe) {
			pe.Subject = key.String()
			pe.Message = fmt.Sprintf("namespace %s is not permitted in project '%s'", ns, p.Name)
		}
		return err
	}
	return nil
}

// Admission returns the check a sync runs on every object before anything
// is written (sync.Collaborators.Admit): the project's limits, then each policy.
// Prunes are checked against the project's limits only, so that nothing
// outside them is ever deleted.
func Admission(p *v1alpha1.AppProject, app *v1alpha1.Application, policies ...Policy) func(ctx context.Context, obj *unstructured.Unstructured, namespaced, prune bool) error {
	dest := app.Spec.Destination
	return func(ctx context.Context, obj *unstructured.Unstructured, namespaced, prune bool) error {
		if err := CheckObject(p, dest, obj, namespaced); err != nil {
			return err
		}
		if prune {
			return nil
		}
		for _, pol := range policies {
			if err := pol.Check(ctx, app, obj); err != nil {
				return err
			}
		}
		return nil
	}
}

// CheckApplication refuses an application whose sources or destination the
// project does not allow, the destination as the app gives it
// (CheckApplicationOn with its server and name). The sources of an app
// with a source hydrator are its dry source and its sync source (the
// repository hydrated into), each checked against sourceRepos, as Argo CD
// checks both.
func CheckApplication(p *v1alpha1.AppProject, app *v1alpha1.Application) error {
	d := app.Spec.Destination
	return CheckApplicationOn(p, app, d.Server, d.Name)
}

// CheckApplicationOn is CheckApplication for an app whose destination is
// the cluster of server and name (the configured cluster it names by
// either): a project destination matches by either, as Argo CD matches the
// destination cluster, and the refusal names the cluster as the app does
// (by name when it gives one).
func CheckApplicationOn(p *v1alpha1.AppProject, app *v1alpha1.Application, server, name string) error {
	var errs []error
	srcs := app.Spec.AllSources()
	if h := app.Spec.SourceHydrator; h != nil {
		srcs = append([]v1alpha1.ApplicationSource{h.GetDrySource()}, srcs...)
	}
	seen := map[string]bool{}
	for _, src := range srcs {
		if seen[src.RepoURL] {
			continue
		}
		seen[src.RepoURL] = true
		if err := CheckSource(p, src.RepoURL); err != nil {
			errs = append(errs, err)
		}
	}
	d := app.Spec.Destination
	if err := CheckDestination(p, server, name, d.Namespace); err != nil {
		var pe *PolicyError
		if errors.As(err, &pe) && d.Name != "" && name != "" {
			pe.Message = fmt.Sprintf("application destination server '%s' and namespace '%s' do not match any of the allowed destinations in project '%s'", name, d.Namespace, p.Name)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
