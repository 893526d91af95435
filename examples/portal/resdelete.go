package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/rbac"
	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// Modes of a resource's deletion, as Argo CD's API server has them.
const (
	deleteForeground = "delete" // foreground propagation
	deleteOrphan     = "orphan" // the dependents stay
	deleteForce      = "force"  // background propagation, no grace period
)

// deleteResourceRequest is the resource delete dialog: the object, the
// mode, and its name typed again (Argo CD's confirmation).
type deleteResourceRequest struct {
	Key     string `json:"key"`
	Mode    string `json:"mode"`
	Confirm string `json:"confirm"`
}

// deleteOptions are Argo CD's DeleteResource options for mode.
func deleteOptions(mode string) (metav1.DeleteOptions, error) {
	var prop metav1.DeletionPropagation
	opts := metav1.DeleteOptions{}
	switch mode {
	case deleteForeground, "":
		prop = metav1.DeletePropagationForeground
	case deleteOrphan:
		prop = metav1.DeletePropagationOrphan
	case deleteForce:
		prop = metav1.DeletePropagationBackground
		zero := int64(0)
		opts.GracePeriodSeconds = &zero
	default:
		return opts, fmt.Errorf("mode %q: want delete, orphan or force", mode)
	}
	opts.PropagationPolicy = &prop
	return opts, nil
}

// apiDeleteResource deletes one object of the app's tree through the API
// server, with the UID read from the tree as a precondition; the app is
// refreshed after. It needs what Argo CD 3 asks for deleting a resource:
// "applications, delete/<group>/<kind>/<namespace>/<name>" on the app (or,
// with argocd-cm's fine-grained inheritance, "applications, delete"). Only
// the portal's own cluster (--kubeconfig's first context) is reached, as
// for logs.
func (s *server) apiDeleteResource(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet)
	if err != nil {
		s.denyChange(w, r, c, err)
		return
	}
	var body deleteResourceRequest
	if !readBody(w, r, &body) {
		return
	}
	key, err := resource.ParseKey(body.Key)
	if err != nil {
		apiError(w, http.StatusBadRequest, "key: "+err.Error())
		return
	}
	details := map[string]any{"key": body.Key, "mode": body.Mode}
	if err := s.opts.Authz.decideResource(c.identity, rbac.ActionDelete, appObject(a), key); err != nil {
		msg := fmt.Sprintf("application %s: %s: %v", a.Name, key, err)
		s.audit.write(c.identity, "delete-resource", a, details, refusedPrefix+msg)
		apiError(w, http.StatusForbidden, msg)
		return
	}
	opts, err := deleteOptions(body.Mode)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if body.Confirm != key.Name {
		msg := fmt.Sprintf("%s: type the resource's name to confirm its deletion", key)
		s.audit.write(c.identity, "delete-resource", a, details, refusedPrefix+msg)
		apiError(w, http.StatusBadRequest, msg)
		return
	}
	if s.opts.KubeDynamic == nil || s.opts.Kube == nil {
		apiError(w, http.StatusServiceUnavailable, "delete resource: the portal has no cluster client")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), kubeTimeout*3)
	defer cancel()
	err = s.deleteResource(ctx, a, key, opts)
	outcome := "deleted"
	if err != nil {
		outcome = "error: " + err.Error()
	}
	s.audit.write(c.identity, "delete-resource", a, details, outcome)
	switch {
	case errors.Is(err, gitops.ErrNotInApp):
		apiError(w, http.StatusNotFound, fmt.Sprintf("application %s: no %s", a.Name, key))
		return
	case err != nil:
		apiError(w, http.StatusBadGateway, err.Error())
		return
	}
	s.reconcileNow(r.Context(), a)
	writeJSON(w, http.StatusOK, map[string]string{"deleted": key.String(), "mode": body.Mode})
}

// deleteResource reads key from the app's tree and deletes it.
func (s *server) deleteResource(ctx context.Context, a *gitops.Application, key resource.Key, opts metav1.DeleteOptions) error {
	obj, err := s.opts.Engine.LiveObject(ctx, a, key)
	if err != nil {
		return err
	}
	gvk := obj.GroupVersionKind()
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(s.opts.Kube.Discovery()))
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	uid := obj.GetUID()
	opts.Preconditions = &metav1.Preconditions{UID: &uid}
	var ri dynamic.ResourceInterface = s.opts.KubeDynamic.Resource(m.Resource)
	if key.Namespace != "" {
		ri = s.opts.KubeDynamic.Resource(m.Resource).Namespace(key.Namespace)
	}
	if err := ri.Delete(ctx, key.Name, opts); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}
