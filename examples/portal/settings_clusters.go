package main

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"sort"
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/rbac"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// secretTypeCluster is the Secret type of Argo CD's clusters.
const secretTypeCluster = "cluster"

// implicitInCluster is the ID of the in-cluster destination when no
// Secret names it (Argo CD's implicit in-cluster).
const implicitInCluster = "in-cluster"

// clusterView is one cluster as the Clusters page shows it: what Argo
// CD's cluster list shows, and how it authenticates (never a token or
// key).
type clusterView struct {
	// ID is the Secret's name, or "in-cluster" for the implicit one.
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Server     string   `json:"server"`
	Project    string   `json:"project,omitempty"`
	Shard      string   `json:"shard,omitempty"`
	Namespaces []string `json:"namespaces"`
	// ClusterResources: with namespaces, may apps manage cluster-scoped
	// objects.
	ClusterResources bool `json:"clusterResources"`
	// Auth says how the portal reaches it: "bearer token", "TLS client
	// certificate", "basic auth", "exec provider", "the portal's own
	// identity" (in-cluster), or "none".
	Auth string `json:"auth"`
	// Origin is "Secret", "implicit" (in-cluster, no Secret) or
	// "kubeconfig" (the portal's --kubeconfig: read only).
	Origin string `json:"origin"`
	// Error is why a Secret does not read (the cluster is left out of the
	// engine's destinations).
	Error         string `json:"error,omitempty"`
	Update        bool   `json:"update"`
	Delete        bool   `json:"delete"`
	UpdateRefused string `json:"updateRefused,omitempty"`
}

// clusterRBACObject is a cluster's object in Argo CD's RBAC:
// "<project>/<server>" for a project's cluster, else the server.
func clusterRBACObject(project, server string) string {
	if project != "" {
		return project + "/" + server
	}
	return server
}

// clusterConfigAuth names how a cluster Secret's config authenticates,
// from which of its fields are set (their values are never kept).
func clusterConfigAuth(raw []byte, server string) (string, error) {
	var cfg struct {
		BearerToken     string `json:"bearerToken"`
		Username        string `json:"username"`
		Password        string `json:"password"`
		TLSClientConfig struct {
			KeyData []byte `json:"keyData"`
		} `json:"tlsClientConfig"`
		ExecProviderConfig *json.RawMessage `json:"execProviderConfig"`
		AWSAuthConfig      *json.RawMessage `json:"awsAuthConfig"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return "", fmt.Errorf("key config: not JSON of Argo CD's ClusterConfig: %s", jsonErrorWhere(err))
		}
	}
	var ways []string
	if cfg.BearerToken != "" {
		ways = append(ways, "bearer token")
	}
	if cfg.Username != "" || cfg.Password != "" {
		ways = append(ways, "basic auth")
	}
	if len(cfg.TLSClientConfig.KeyData) > 0 {
		ways = append(ways, "TLS client certificate")
	}
	if cfg.ExecProviderConfig != nil {
		ways = append(ways, "exec provider")
	}
	if cfg.AWSAuthConfig != nil {
		ways = append(ways, "AWS auth")
	}
	if len(ways) == 0 && server == v1alpha1.KubernetesInternalAPIServerAddr {
		return "the portal's own identity", nil
	}
	if len(ways) == 0 {
		return "none", nil
	}
	return strings.Join(ways, ", "), nil
}

// jsonErrorWhere says where a JSON error is, without quoting the input.
func jsonErrorWhere(err error) string {
	switch e := err.(type) {
	case *json.SyntaxError:
		return fmt.Sprintf("syntax error at byte %d", e.Offset)
	case *json.UnmarshalTypeError:
		return fmt.Sprintf("field %s: not a %s", e.Field, e.Type)
	}
	return "does not decode"
}

// clusterViewOf reads a cluster Secret as Argo CD does.
func clusterViewOf(sec *corev1.Secret) clusterView {
	d := func(k string) string { return string(sec.Data[k]) }
	v := clusterView{ID: sec.Name, Name: d("name"), Server: d("server"), Project: d("project"), Shard: d("shard"),
		Namespaces: splitList(d("namespaces")), ClusterResources: d("clusterResources") == "true", Origin: "Secret"}
	if v.Name == "" {
		v.Name = v.Server
	}
	auth, err := clusterConfigAuth(sec.Data["config"], v.Server)
	v.Auth = auth
	if err != nil {
		v.Error = fmt.Sprintf("Secret %s/%s: %v", sec.Namespace, sec.Name, err)
	}
	return v
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// clusterSecrets lists the namespace's cluster Secrets.
func (s *server) clusterSecrets(ctx context.Context) ([]corev1.Secret, error) {
	var list corev1.SecretList
	if err := s.ns.cache.List(ctx, &list, client.InNamespace(s.ns.ns), client.MatchingLabels{engine.ClusterSecretTypeLabel: secretTypeCluster}); err != nil {
		return nil, fmt.Errorf("--namespace %s: list cluster Secrets: %w", s.ns.ns, err)
	}
	return list.Items, nil
}

// clusterList is every cluster the portal knows: in namespace mode the
// cluster Secrets, the implicit in-cluster when no Secret names its
// address, and the --kubeconfig's other clusters (read only); over an
// --apps folder the engine's clusters, read only.
func (s *server) clusterList(ctx context.Context) ([]clusterView, error) {
	var out []clusterView
	inCluster := false
	if s.ns != nil {
		secrets, err := s.clusterSecrets(ctx)
		if err != nil {
			return nil, err
		}
		for i := range secrets {
			v := clusterViewOf(&secrets[i])
			inCluster = inCluster || v.Server == v1alpha1.KubernetesInternalAPIServerAddr
			out = append(out, v)
		}
	}
	clusters := s.opts.Engine.Settings().Options().Clusters
	if s.ns != nil {
		clusters = s.ns.base
	}
	for _, cc := range clusters {
		isIn := cc.Server == v1alpha1.KubernetesInternalAPIServerAddr
		if isIn && inCluster || s.ns != nil && !isIn && hasServer(out, cc.Server) {
			continue
		}
		v := clusterView{ID: cc.Name, Name: cc.Name, Server: cc.Server, Project: cc.Project, Namespaces: append([]string{}, cc.Namespaces...),
			ClusterResources: cc.ClusterResources, Auth: "the portal's --kubeconfig", Origin: "kubeconfig"}
		if isIn {
			v.ID, v.Auth = implicitInCluster, "the portal's own identity"
			if s.ns != nil {
				v.Origin = "implicit"
			}
		}
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// hasServer reports whether a cluster of vs has server's address.
func hasServer(vs []clusterView, server string) bool {
	for _, v := range vs {
		if v.Server == server {
			return true
		}
	}
	return false
}

// clusters are the clusters c may get ("clusters, get"), with what c may
// do with each: a Secret's, and the implicit in-cluster's (an update
// writes its Secret, as Argo CD's does), may change in namespace mode.
func (s *server) clusters(ctx context.Context, c caller) ([]clusterView, error) {
	all, err := s.clusterList(ctx)
	if err != nil {
		return nil, err
	}
	out := []clusterView{}
	for _, v := range all {
		obj := clusterRBACObject(v.Project, v.Server)
		if !s.opts.Authz.allow(c.identity, rbac.ResourceClusters, rbac.ActionGet, obj) {
			continue
		}
		if s.ns != nil && v.Origin != "kubeconfig" {
			v.UpdateRefused = s.refusal(c, rbac.ResourceClusters, rbac.ActionUpdate, obj, "")
			v.Update = v.UpdateRefused == ""
			v.Delete = v.Origin == "Secret" && s.opts.Authz.allow(c.identity, rbac.ResourceClusters, rbac.ActionDelete, obj)
		}
		out = append(out, v)
	}
	return out, nil
}

// clustersPage is GET /settings/clusters.
func (s *server) clustersPage(w http.ResponseWriter, r *http.Request, c caller) {
	cl, err := s.clusters(r.Context(), c)
	s.settingsPage(w, r, c, "clusters", "Clusters", cl, "", err)
}

// apiClusters is GET /api/v1/clusters.
func (s *server) apiClusters(w http.ResponseWriter, r *http.Request, c caller) {
	cl, err := s.clusters(r.Context(), c)
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": cl, "readOnly": s.ns == nil})
}

// clusterEdit is the body of a cluster's update: the fields of Argo CD's
// cluster edit form the portal changes.
type clusterEdit struct {
	Name       string   `json:"name"`
	Namespaces []string `json:"namespaces"`
	Project    string   `json:"project"`
}

// check refuses a namespace that is no DNS label, naming it.
func (e clusterEdit) check() error {
	for i, ns := range e.Namespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return badSetting("namespaces[%d] %q: %s", i, ns, strings.Join(errs, "; "))
		}
	}
	return nil
}

// apply writes e into a cluster Secret's data (an empty name or project
// is removed; the name then is the server, as Argo CD reads it).
func (e clusterEdit) apply(data map[string][]byte) {
	set := func(k, v string) {
		if v == "" {
			delete(data, k)
			return
		}
		data[k] = []byte(v)
	}
	set("name", e.Name)
	set("namespaces", strings.Join(e.Namespaces, ","))
	set("project", e.Project)
}

// clusterSecretName is the name Argo CD gives a cluster's Secret:
// "cluster-<host>-" and the FNV-32a hash of its server.
func clusterSecretName(server string) string {
	host := strings.TrimPrefix(strings.TrimPrefix(server, "https://"), "http://")
	host, _, _ = strings.Cut(host, "/")
	host, _, _ = strings.Cut(host, ":")
	h := fnv.New32a()
	_, _ = h.Write([]byte(server))
	return fmt.Sprintf("cluster-%s-%d", host, h.Sum32())
}

// apiUpdateCluster is POST /api/v1/clusters/{id}/update: the name,
// namespaces and project of a cluster Secret (the implicit in-cluster's
// is created), for a caller with "clusters, update" on the cluster where
// it is and, when the project changes, where it goes.
func (s *server) apiUpdateCluster(w http.ResponseWriter, r *http.Request, c caller) {
	var e clusterEdit
	op := settingsOp{Action: "cluster.update", Resource: rbac.ResourceClusters, Details: map[string]any{"secret": r.PathValue("id")}}
	err := readSettingsBody(r, &e)
	if err == nil {
		op.Details = map[string]any{"secret": r.PathValue("id"), "name": e.Name, "namespaces": e.Namespaces, "project": e.Project}
		err = s.updateCluster(r, c, e, &op)
	}
	s.finishSetting(w, c, op, map[string]string{"id": r.PathValue("id")}, err)
}

func (s *server) updateCluster(r *http.Request, c caller, e clusterEdit, op *settingsOp) error {
	if err := s.settingsWritable(); err != nil {
		return err
	}
	if err := e.check(); err != nil {
		return err
	}
	ctx, cancel := settingsContext(r)
	defer cancel()
	id := r.PathValue("id")
	if id == implicitInCluster {
		return s.createInCluster(ctx, c, e, op)
	}
	var written *corev1.Secret
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sec, err := s.clusterSecret(ctx, id)
		if err != nil {
			return err
		}
		v := clusterViewOf(sec)
		op.Object, op.Project = clusterRBACObject(v.Project, v.Server), v.Project
		if err := s.settingsAllowed(c, rbac.ResourceClusters, rbac.ActionUpdate, op.Object, ""); err != nil {
			return err
		}
		if e.Project != v.Project {
			if err := s.settingsAllowed(c, rbac.ResourceClusters, rbac.ActionUpdate, clusterRBACObject(e.Project, v.Server), ""); err != nil {
				return err
			}
		}
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		e.apply(sec.Data)
		if err := s.ns.cl.Update(ctx, sec); err != nil {
			return err
		}
		written = sec
		return nil
	})
	if err != nil {
		return wrapSecretErr("cluster", id, err)
	}
	return s.ns.waitSecret(ctx, written.Name, written.ResourceVersion)
}

// createInCluster writes the Secret of the implicit in-cluster
// destination, as Argo CD's update of it does: its address, no
// credentials (the portal's and the operator's own identity), and e.
func (s *server) createInCluster(ctx context.Context, c caller, e clusterEdit, op *settingsOp) error {
	server := v1alpha1.KubernetesInternalAPIServerAddr
	op.Object = clusterRBACObject("", server)
	if err := s.settingsAllowed(c, rbac.ResourceClusters, rbac.ActionUpdate, op.Object, ""); err != nil {
		return err
	}
	if e.Project != "" {
		op.Project = e.Project
		if err := s.settingsAllowed(c, rbac.ResourceClusters, rbac.ActionUpdate, clusterRBACObject(e.Project, server), ""); err != nil {
			return err
		}
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns.ns, Name: clusterSecretName(server),
		Labels:      map[string]string{engine.ClusterSecretTypeLabel: secretTypeCluster},
		Annotations: map[string]string{"managed-by": "argocd.argoproj.io"}},
		Data: map[string][]byte{"server": []byte(server), "config": []byte(`{"tlsClientConfig":{"insecure":false}}`)}}
	e.apply(sec.Data)
	if err := s.ns.cl.Create(ctx, sec); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return &settingsError{code: http.StatusConflict, msg: fmt.Sprintf("cluster %s: Secret %s already exists", server, sec.Name)}
		}
		return fmt.Errorf("cluster %s: %w", server, err)
	}
	return s.ns.waitSecret(ctx, sec.Name, sec.ResourceVersion)
}

// clusterSecret reads the cluster Secret id of the namespace from the API
// server (404 when it is none).
func (s *server) clusterSecret(ctx context.Context, id string) (*corev1.Secret, error) {
	sec := &corev1.Secret{}
	err := s.ns.cl.Get(ctx, client.ObjectKey{Namespace: s.ns.ns, Name: id}, sec)
	if err == nil && sec.Labels[engine.ClusterSecretTypeLabel] == secretTypeCluster {
		return sec, nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("cluster Secret %s: %w", id, err)
	}
	return nil, &settingsError{code: http.StatusNotFound, msg: fmt.Sprintf("cluster Secret %s: not found", id)}
}

// apiDeleteCluster is POST /api/v1/clusters/{id}/delete: deletes a
// cluster Secret, for a caller with "clusters, delete" on it.
func (s *server) apiDeleteCluster(w http.ResponseWriter, r *http.Request, c caller) {
	op := settingsOp{Action: "cluster.delete", Resource: rbac.ResourceClusters, Details: map[string]any{"secret": r.PathValue("id")}}
	err := s.deleteCluster(r, c, &op)
	s.finishSetting(w, c, op, map[string]string{"id": r.PathValue("id")}, err)
}

func (s *server) deleteCluster(r *http.Request, c caller, op *settingsOp) error {
	if err := s.settingsWritable(); err != nil {
		return err
	}
	if r.PathValue("id") == implicitInCluster {
		return badSetting("cluster %s: the implicit in-cluster destination has no Secret to delete", v1alpha1.KubernetesInternalAPIServerAddr)
	}
	ctx, cancel := settingsContext(r)
	defer cancel()
	sec, err := s.clusterSecret(ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	v := clusterViewOf(sec)
	op.Object, op.Project = clusterRBACObject(v.Project, v.Server), v.Project
	if err := s.settingsAllowed(c, rbac.ResourceClusters, rbac.ActionDelete, op.Object, ""); err != nil {
		return err
	}
	pre := metav1.Preconditions{UID: &sec.UID}
	if err := s.ns.cl.Delete(ctx, sec, &client.DeleteOptions{Preconditions: &pre}); err != nil {
		return wrapSecretErr("cluster", sec.Name, err)
	}
	return s.ns.waitSecret(ctx, sec.Name, "")
}
