package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// apiResource is one kind the cache may watch, at its preferred version.
type apiResource struct {
	gvk        schema.GroupVersionKind
	gvr        schema.GroupVersionResource
	namespaced bool
}

// watchID names one list-watch: a resource, and a namespace in namespaced
// mode ("" otherwise). A zero Resource marks a group version that failed
// discovery.
type watchID struct {
	gvr       schema.GroupVersionResource
	namespace string
}

// discovered is the result of one discovery round.
type discovered struct {
	lists     []metav1.APIResourceList
	resources []apiResource
	version   string
	failed    map[schema.GroupVersion]error
}

// discover asks the server for its preferred resources and version. A
// partial failure (one aggregated API down) is returned in failed, not as an
// error: the other groups keep being served.
func discover(dc discovery.DiscoveryInterface) (discovered, error) {
	var d discovered
	v, err := dc.ServerVersion()
	if err != nil {
		return d, fmt.Errorf("cache: server version: %w", err)
	}
	d.version = v.GitVersion
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		var gerr *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &gerr) {
			return d, fmt.Errorf("cache: discovery: %w", err)
		}
		d.failed = gerr.Groups
	}
	for _, l := range lists {
		if l == nil {
			continue
		}
		d.lists = append(d.lists, *l)
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerbs(r.Verbs, "list", "watch") {
				continue
			}
			d.resources = append(d.resources, apiResource{
				gvk:        gv.WithKind(r.Kind),
				gvr:        gv.WithResource(r.Name),
				namespaced: r.Namespaced,
			})
		}
	}
	// Discovery asks the groups in parallel and returns groups and their
	// resources in no fixed order: sorted, two discoveries of the same
	// server are equal.
	slices.SortFunc(d.lists, func(a, b metav1.APIResourceList) int { return strings.Compare(a.GroupVersion, b.GroupVersion) })
	for i := range d.lists {
		rs := slices.Clone(d.lists[i].APIResources)
		slices.SortFunc(rs, func(a, b metav1.APIResource) int { return strings.Compare(a.Name, b.Name) })
		d.lists[i].APIResources = rs
	}
	return d, nil
}

func hasVerbs(have metav1.Verbs, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// desiredWatches returns the list-watches the options ask for over the
// discovered resources.
func (o *Options) desiredWatches(resources []apiResource) map[watchID]apiResource {
	out := map[watchID]apiResource{}
	for _, r := range resources {
		gk := r.gvk.GroupKind()
		if !o.Filter.AllowsOn(gk, o.Server) {
			continue
		}
		switch {
		case len(o.Namespaces) == 0:
			out[watchID{gvr: r.gvr}] = r
		case r.namespaced:
			for _, ns := range o.Namespaces {
				out[watchID{gvr: r.gvr, namespace: ns}] = r
			}
		default:
			for _, m := range o.ClusterKinds {
				if m.Matches(gk) {
					out[watchID{gvr: r.gvr}] = r
					break
				}
			}
		}
	}
	return out
}

// accessReviewer answers whether the identity may do a verb on a resource.
type accessReviewer interface {
	allowed(ctx context.Context, verb string, id watchID) (bool, string, error)
}

// accessDenied returns nil when the identity may both list and watch id,
// or the reason it may not. A review that fails (the identity may not even
// create reviews) lets the kind through: a forbidden list or watch will then
// taint it by trying.
func accessDenied(ctx context.Context, r accessReviewer, id watchID) error {
	for _, verb := range []string{"list", "watch"} {
		ok, reason, err := r.allowed(ctx, verb, id)
		if err != nil {
			return nil
		}
		if !ok {
			return fmt.Errorf("not allowed to %s %s%s: %s", verb, id.gvr.Resource, inNamespace(id.namespace), reason)
		}
	}
	return nil
}

func inNamespace(ns string) string {
	if ns == "" {
		return ""
	}
	return " in namespace " + ns
}

// ssarReviewer asks the API server with SelfSubjectAccessReviews.
type ssarReviewer struct {
	create  func(ctx context.Context, r *authorizationv1.SelfSubjectAccessReview) (*authorizationv1.SelfSubjectAccessReview, error)
	timeout func(context.Context) (context.Context, context.CancelFunc)
}

func (s ssarReviewer) allowed(ctx context.Context, verb string, id watchID) (bool, string, error) {
	ctx, cancel := s.timeout(ctx)
	defer cancel()
	res, err := s.create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: verb, Group: id.gvr.Group, Version: id.gvr.Version, Resource: id.gvr.Resource, Namespace: id.namespace,
		},
	}})
	if err != nil {
		return false, "", err
	}
	reason := res.Status.Reason
	if reason == "" {
		reason = "denied by RBAC"
	}
	return res.Status.Allowed, reason, nil
}
