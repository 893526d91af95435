package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/rbac"
	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// kubeTimeout bounds each request the portal itself sends to a cluster.
const kubeTimeout = 10 * time.Second

// resourceDetail is one object's panel: live and desired manifests, the
// masked diff, status and events.
type resourceDetail struct {
	Key     string      `json:"key"`
	Sync    string      `json:"sync,omitempty"`
	Health  string      `json:"health,omitempty"`
	Live    string      `json:"live,omitempty"`
	Desired string      `json:"desired,omitempty"`
	Diff    string      `json:"diff,omitempty"`
	Masked  bool        `json:"masked,omitempty"`
	Events  []eventView `json:"events"`
}

// secretMask replaces every Secret value the caller may not read.
const secretMask = "++++++++"

// maskSecret returns obj, or a copy with data and stringData values
// replaced, when obj is a Secret.
func maskSecret(obj *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	if obj == nil || obj.GetKind() != "Secret" || obj.GroupVersionKind().Group != "" {
		return obj, false
	}
	c := obj.DeepCopy()
	for _, f := range []string{"data", "stringData"} {
		if m, ok := c.Object[f].(map[string]any); ok {
			for k := range m {
				m[k] = secretMask
			}
		}
	}
	// The last-applied annotation of client-side apply holds the values too.
	if ann := c.GetAnnotations(); ann != nil {
		if _, ok := ann["kubectl.kubernetes.io/last-applied-configuration"]; ok {
			ann["kubectl.kubernetes.io/last-applied-configuration"] = secretMask
			c.SetAnnotations(ann)
		}
	}
	return c, true
}

func toYAML(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	c := obj.DeepCopy()
	c.SetManagedFields(nil)
	b, err := yaml.Marshal(c.Object)
	if err != nil {
		return fmt.Sprintf("# %s: %v", resource.KeyOf(obj), err)
	}
	return string(b)
}

func (s *server) apiResource(w http.ResponseWriter, r *http.Request, c caller) {
	a, p, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet)
	if err != nil {
		deny(w, err)
		return
	}
	key, err := resource.ParseKey(r.URL.Query().Get("key"))
	if err != nil {
		apiError(w, http.StatusBadRequest, "key: "+err.Error())
		return
	}
	st := s.diffStatus(r.Context(), a)
	d := resourceDetail{Key: key.String(), Events: []eventView{}}
	found := false
	for _, rs := range st.Resources {
		if rs.Key == key {
			found = true
			d.Sync, d.Diff = string(rs.Status), rs.Diff
			if rs.Health != nil {
				d.Health = string(rs.Health.Code)
			}
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), kubeTimeout)
	defer cancel()
	// The whole live object, through the engine's tree: a tracked object
	// from its cache, a descendant (kept lean there) from the API server.
	live, err := s.opts.Engine.LiveObject(ctx, a, key)
	switch {
	case err == nil:
		if !found {
			found = true
			if n, ok := s.liveTreeOf(ctx, a).nodes[key]; ok && n.Health != nil {
				d.Health = n.Health.Status
			}
		}
	case found || errors.Is(err, gitops.ErrNotInApp):
		// A tracked object not in the cluster (yet), or no object of the app.
	default:
		apiError(w, http.StatusBadGateway, err.Error())
		return
	}
	if !found {
		apiError(w, http.StatusNotFound, fmt.Sprintf("application %s: no resource %s", a.Name, key))
		return
	}
	desired := s.desiredObject(ctx, a, key)
	if !p.Secrets {
		var m1, m2 bool
		live, m1 = maskSecret(live)
		desired, m2 = maskSecret(desired)
		d.Masked = m1 || m2
	}
	d.Live, d.Desired = toYAML(live), toYAML(desired)
	d.Events = s.events(ctx, key.Namespace, map[resource.Key]bool{key: true})
	writeJSON(w, http.StatusOK, d)
}

// desiredObject renders the app (the engine's render cache makes this
// cheap when nothing changed) and returns key's object, or nil.
func (s *server) desiredObject(ctx context.Context, a *gitops.Application, key resource.Key) *unstructured.Unstructured {
	objs, _, err := s.opts.Engine.Render(ctx, a)
	if err != nil {
		return nil
	}
	for _, o := range objs {
		k := resource.KeyOf(o)
		if k.Namespace == "" && key.Namespace != "" && k.Kind == key.Kind && k.Group == key.Group && k.Name == key.Name {
			k.Namespace = key.Namespace // rendered without a namespace: the destination's
		}
		if k == key {
			return o
		}
	}
	return nil
}

// eventView is one Kubernetes Event.
type eventView struct {
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Object  string    `json:"object"`
	Message string    `json:"message"`
	Count   int32     `json:"count,omitempty"`
	Last    time.Time `json:"last"`
}

// events lists the Events of namespace about the given objects, newest
// first (at most 100).
func (s *server) events(ctx context.Context, namespace string, about map[resource.Key]bool) []eventView {
	out := []eventView{}
	if s.opts.Kube == nil || namespace == "" {
		return out
	}
	list, err := s.opts.Kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{Limit: 500})
	if err != nil {
		return out
	}
	for _, e := range list.Items {
		io := e.InvolvedObject
		gv, _ := parseGroup(io.APIVersion)
		k := resource.Key{Group: gv, Kind: io.Kind, Namespace: io.Namespace, Name: io.Name}
		if !about[k] {
			continue
		}
		last := e.LastTimestamp.Time
		if last.IsZero() {
			last = e.EventTime.Time
		}
		out = append(out, eventView{Type: e.Type, Reason: e.Reason, Object: k.String(), Message: e.Message, Count: e.Count, Last: last})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Last.After(out[j].Last) })
	if len(out) > 100 {
		out = out[:100]
	}
	return out
}

// parseGroup returns the group of an apiVersion ("" for core).
func parseGroup(apiVersion string) (string, string) {
	for i := 0; i < len(apiVersion); i++ {
		if apiVersion[i] == '/' {
			return apiVersion[:i], apiVersion[i+1:]
		}
	}
	return "", apiVersion
}

func (s *server) apiEvents(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet)
	if err != nil {
		deny(w, err)
		return
	}
	st, _ := s.appStatus(a)
	about := map[resource.Key]bool{}
	for _, rs := range st.Resources {
		about[rs.Key] = true
	}
	ctx, cancel := context.WithTimeout(r.Context(), kubeTimeout)
	defer cancel()
	writeJSON(w, http.StatusOK, s.events(ctx, a.Spec.Destination.Namespace, about))
}
