package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http"
	"sort"
	"strings"
	gosync "sync"
	"time"

	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/rbac"
	"github.com/kubegitops/gitops/source"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Argo CD's Secret types of repositories (engine.ClusterSecretTypeLabel).
const (
	secretTypeRepository = "repository"
	secretTypeRepoCreds  = "repo-creds"
)

// repoConnectionTimeout bounds one repository's connection check.
const repoConnectionTimeout = 5 * time.Second

// repoSecretFields are the fields of a repository Secret that hold a
// secret: the pages say "set", never the value (Argo CD's
// Repository.Sanitized leaves each of them out).
var repoSecretFields = []string{"password", "bearerToken", "sshPrivateKey", "tlsClientCertData", "tlsClientCertKey",
	"githubAppPrivateKey", "gcpServiceAccountKey", "azureServicePrincipalClientSecret"}

// repoView is one repository or credential template as the Repositories
// page shows it: what Argo CD's sanitised repository shows, and which
// secret fields are set.
type repoView struct {
	// ID is the Secret's name.
	ID string `json:"id"`
	// Kind is repository or repo-creds (a credential template).
	Kind string `json:"kind"`
	// URL is the repository's URL (a URL prefix for a template), any
	// password in it removed.
	URL      string `json:"url"`
	Type     string `json:"type"`
	Name     string `json:"name,omitempty"`
	Project  string `json:"project,omitempty"`
	Username string `json:"username,omitempty"`
	// Secrets are the secret fields that are set (never their values).
	Secrets []string `json:"secrets"`
	// Update and Delete: may the caller change it; UpdateRefused says
	// why not, naming the policy line.
	Update        bool   `json:"update"`
	Delete        bool   `json:"delete"`
	UpdateRefused string `json:"updateRefused,omitempty"`
	// Connection is the outcome of an ls-remote (GET ?connection=true).
	Connection *repoConnection `json:"connection,omitempty"`

	// rawURL is the URL as the Secret has it: the RBAC object.
	rawURL string
}

// repoConnection is a repository's connection state, as Argo CD's
// ConnectionState: Successful, Failed, or Unknown when not checked.
type repoConnection struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// repoRBACObject is a repository's object in Argo CD's RBAC:
// "<project>/<url>" for a project's repository, else the URL; a
// credential template's is its URL.
func repoRBACObject(kind, project, url string) string {
	if project != "" && kind == secretTypeRepository {
		return project + "/" + url
	}
	return url
}

// repoType is the repository's type as Argo CD normalises it: the
// type field, else oci for an oci:// URL, else git.
func repoType(typ, url string) string {
	switch {
	case typ != "":
		return typ
	case strings.HasPrefix(url, "oci://"):
		return "oci"
	}
	return "git"
}

// repoViewOf reads a repository Secret's fields as Argo CD does (data;
// the cache's Secrets have stringData merged in).
func repoViewOf(sec *corev1.Secret) repoView {
	d := func(k string) string { return string(sec.Data[k]) }
	v := repoView{ID: sec.Name, Kind: sec.Labels[engine.ClusterSecretTypeLabel], URL: source.RedactURL(d("url")), rawURL: d("url"),
		Type: repoType(d("type"), d("url")), Name: d("name"), Project: d("project"), Username: d("username"), Secrets: []string{}}
	for _, k := range repoSecretFields {
		if len(sec.Data[k]) > 0 {
			v.Secrets = append(v.Secrets, k)
		}
	}
	return v
}

// repoSecrets lists the repository and repo-creds Secrets of the served
// namespace.
func (s *server) repoSecrets(ctx context.Context) ([]corev1.Secret, error) {
	var out []corev1.Secret
	for _, typ := range []string{secretTypeRepository, secretTypeRepoCreds} {
		var list corev1.SecretList
		if err := s.ns.cache.List(ctx, &list, client.InNamespace(s.ns.ns), client.MatchingLabels{engine.ClusterSecretTypeLabel: typ}); err != nil {
			return nil, fmt.Errorf("--namespace %s: list %s Secrets: %w", s.ns.ns, typ, err)
		}
		out = append(out, list.Items...)
	}
	return out, nil
}

// repositories are the repositories and templates c may get
// ("repositories, get"), sorted by project and URL as Argo CD sorts them,
// with what c may do with each; nil over an --apps folder.
func (s *server) repositories(ctx context.Context, c caller) ([]repoView, error) {
	if s.ns == nil {
		return nil, nil
	}
	secrets, err := s.repoSecrets(ctx)
	if err != nil {
		return nil, err
	}
	out := []repoView{}
	for i := range secrets {
		v := repoViewOf(&secrets[i])
		obj := repoRBACObject(v.Kind, v.Project, v.rawURL)
		if !s.opts.Authz.allow(c.identity, rbac.ResourceRepositories, rbac.ActionGet, obj) {
			continue
		}
		v.UpdateRefused = s.refusal(c, rbac.ResourceRepositories, rbac.ActionUpdate, obj, v.rawURL)
		v.Update = v.UpdateRefused == ""
		v.Delete = s.opts.Authz.allow(c.identity, rbac.ResourceRepositories, rbac.ActionDelete, obj)
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind == secretTypeRepository
		}
		return out[i].Project+"/"+out[i].URL < out[j].Project+"/"+out[j].URL
	})
	return out, nil
}

// checkConnections runs one ls-remote per Git repository of repos at once
// (through the engine's source for its URL, with the credentials the
// engine reads it with), each bounded by repoConnectionTimeout.
func (s *server) checkConnections(ctx context.Context, repos []repoView) {
	var wg gosync.WaitGroup
	for i := range repos {
		v := &repos[i]
		switch {
		case v.Kind == secretTypeRepoCreds:
			v.Connection = &repoConnection{Status: "Unknown", Message: "a credential template: nothing to connect to"}
			continue
		case v.Type != "git":
			v.Connection = &repoConnection{Status: "Unknown", Message: "checked for Git repositories only"}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			v.Connection = s.lsRemote(ctx, v.rawURL, s.ns.creds.ForProject(v.Project, v.rawURL))
		}()
	}
	wg.Wait()
}

// lsRemote resolves HEAD of the repository at url with creds (nil:
// anonymous) through the engine's source for url.
func (s *server) lsRemote(ctx context.Context, url string, creds *source.Credentials) *repoConnection {
	ctx, cancel := context.WithTimeout(ctx, repoConnectionTimeout)
	defer cancel()
	from, err := s.opts.Engine.Sources().Source(url)
	if err == nil {
		repo := source.Repository{URL: url, Credentials: creds}
		_, err = from.Resolve(ctx, repo, "HEAD")
	}
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), url, source.RedactURL(url))
		return &repoConnection{Status: "Failed", Message: "Unable to connect to repository: " + msg}
	}
	return &repoConnection{Status: "Successful"}
}

// reposPage is GET /settings/repositories.
func (s *server) reposPage(w http.ResponseWriter, r *http.Request, c caller) {
	repos, err := s.repositories(r.Context(), c)
	create := ""
	if s.ns != nil {
		create = s.repoCreateRefusal(c)
	}
	s.settingsPage(w, r, c, "repositories", "Repositories", repos, create, err)
}

// repoCreateRefusal is why c may create no repository ("" when c may
// create one anywhere, or in one of the projects: the form names the
// project, and the create is decided on "<project>/<url>").
func (s *server) repoCreateRefusal(c caller) string {
	why := s.refusal(c, rbac.ResourceRepositories, rbac.ActionCreate, "*", "")
	if why == "" {
		return ""
	}
	for _, p := range s.projectList() {
		if s.opts.Authz.allow(c.identity, rbac.ResourceRepositories, rbac.ActionCreate, p.Name+"/*") {
			return ""
		}
	}
	return why
}

// apiRepos is GET /api/v1/repositories: the repositories c may get; with
// ?connection=true each with its connection state.
func (s *server) apiRepos(w http.ResponseWriter, r *http.Request, c caller) {
	repos, err := s.repositories(r.Context(), c)
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if repos == nil {
		repos = []repoView{}
	}
	if r.URL.Query().Get("connection") == "true" {
		s.checkConnections(r.Context(), repos)
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": repos, "readOnly": s.ns == nil})
}

// repoEdit is the body of a repository's create or update. Password,
// when empty, leaves the one set (it is never shown, so never sent back).
type repoEdit struct {
	URL      string `json:"url"`
	Type     string `json:"type"`
	Name     string `json:"name"`
	Project  string `json:"project"`
	Username string `json:"username"`
	Password string `json:"password"`
}

// check refuses a type Argo CD does not know.
func (e repoEdit) check() error {
	switch e.Type {
	case "", "git", "helm", "oci":
		return nil
	}
	return badSetting("type %q: want git, helm or oci", e.Type)
}

// apply writes e's fields into a Secret's data: an empty field is
// removed, except the password, kept when not given.
func (e repoEdit) apply(data map[string][]byte) {
	set := func(k, v string) {
		if v == "" {
			delete(data, k)
			return
		}
		data[k] = []byte(v)
	}
	set("type", e.Type)
	set("name", e.Name)
	set("project", e.Project)
	set("username", e.Username)
	if e.Password != "" {
		data["password"] = []byte(e.Password)
	}
}

// details are e's fields for the audit log: never the password.
func (e repoEdit) details() map[string]any {
	return map[string]any{"type": e.Type, "name": e.Name, "project": e.Project, "username": e.Username, "passwordChanged": e.Password != ""}
}

// repoSecretName is the name Argo CD gives a repository's Secret:
// "repo-" and the FNV-32a hash of its URL and project.
func repoSecretName(url, project string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(url))
	_, _ = h.Write([]byte(project))
	return fmt.Sprintf("repo-%d", h.Sum32())
}

// apiCreateRepo is POST /api/v1/repositories: a repository Secret, as
// Argo CD writes it, for a caller with "repositories, create" on
// "<project>/<url>".
func (s *server) apiCreateRepo(w http.ResponseWriter, r *http.Request, c caller) {
	var e repoEdit
	op := settingsOp{Action: "repository.create", Resource: rbac.ResourceRepositories}
	err := readSettingsBody(r, &e)
	if err == nil {
		op.Object, op.Project, op.Details = repoRBACObject(secretTypeRepository, e.Project, e.URL), e.Project, e.details()
		err = s.createRepo(r, c, e)
	}
	s.finishSetting(w, c, op, map[string]string{"url": source.RedactURL(e.URL)}, err)
}

func (s *server) createRepo(r *http.Request, c caller, e repoEdit) error {
	if err := s.settingsWritable(); err != nil {
		return err
	}
	if e.URL == "" {
		return badSetting("url: required")
	}
	if err := e.check(); err != nil {
		return err
	}
	if err := s.settingsAllowed(c, rbac.ResourceRepositories, rbac.ActionCreate, repoRBACObject(secretTypeRepository, e.Project, e.URL), e.URL); err != nil {
		return err
	}
	ctx, cancel := settingsContext(r)
	defer cancel()
	// As Argo CD, a Git repository of no project is connected to first,
	// with its credentials or, without any, a template's.
	if repoType(e.Type, e.URL) == "git" && e.Project == "" {
		creds := s.ns.creds.ForProject("", e.URL)
		if e.Username != "" || e.Password != "" {
			creds = &source.Credentials{Username: e.Username, Password: e.Password}
		}
		if st := s.lsRemote(ctx, e.URL, creds); st.Status != "Successful" {
			return badSetting("repository %s: %s", source.RedactURL(e.URL), st.Message)
		}
	}
	existing, err := s.repoSecrets(ctx)
	if err != nil {
		return err
	}
	for i := range existing {
		v := repoViewOf(&existing[i])
		if v.Kind == secretTypeRepository && v.rawURL == e.URL && v.Project == e.Project {
			return &settingsError{code: http.StatusConflict, msg: fmt.Sprintf("repository %s (project %q): already exists (Secret %s)", source.RedactURL(e.URL), e.Project, v.ID)}
		}
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns.ns, Name: repoSecretName(e.URL, e.Project),
		Labels:      map[string]string{engine.ClusterSecretTypeLabel: secretTypeRepository},
		Annotations: map[string]string{"managed-by": "argocd.argoproj.io"}},
		Data: map[string][]byte{"url": []byte(e.URL)}}
	e.apply(sec.Data)
	if err := s.ns.cl.Create(ctx, sec); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return &settingsError{code: http.StatusConflict, msg: fmt.Sprintf("repository %s: Secret %s already exists", source.RedactURL(e.URL), sec.Name)}
		}
		return fmt.Errorf("repository %s: %w", source.RedactURL(e.URL), err)
	}
	return s.ns.waitSecret(ctx, sec.Name, sec.ResourceVersion)
}

// repoSecret reads the repository Secret id of the namespace from the API
// server (404 when it is none).
func (s *server) repoSecret(ctx context.Context, id string) (*corev1.Secret, error) {
	sec := &corev1.Secret{}
	err := s.ns.cl.Get(ctx, client.ObjectKey{Namespace: s.ns.ns, Name: id}, sec)
	if err == nil {
		if t := sec.Labels[engine.ClusterSecretTypeLabel]; t == secretTypeRepository || t == secretTypeRepoCreds {
			return sec, nil
		}
	} else if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("repository Secret %s: %w", id, err)
	}
	return nil, &settingsError{code: http.StatusNotFound, msg: fmt.Sprintf("repository Secret %s: not found", id)}
}

// apiUpdateRepo is POST /api/v1/repositories/{id}/update: the Secret's
// type, name, project, username and (when given) password, for a caller
// with "repositories, update" on the repository where it is and where it
// goes (Argo CD checks both).
func (s *server) apiUpdateRepo(w http.ResponseWriter, r *http.Request, c caller) {
	var e repoEdit
	op := settingsOp{Action: "repository.update", Resource: rbac.ResourceRepositories, Details: map[string]any{"secret": r.PathValue("id")}}
	err := readSettingsBody(r, &e)
	if err == nil {
		op.Details = e.details()
		op.Details["secret"] = r.PathValue("id")
		err = s.updateRepo(r, c, e, &op)
	}
	s.finishSetting(w, c, op, map[string]string{"id": r.PathValue("id")}, err)
}

func (s *server) updateRepo(r *http.Request, c caller, e repoEdit, op *settingsOp) error {
	if err := s.settingsWritable(); err != nil {
		return err
	}
	if e.URL != "" {
		return badSetting("url: a repository's URL does not change (delete it and add the new one)")
	}
	if err := e.check(); err != nil {
		return err
	}
	ctx, cancel := settingsContext(r)
	defer cancel()
	var written *corev1.Secret
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sec, err := s.repoSecret(ctx, r.PathValue("id"))
		if err != nil {
			return err
		}
		v := repoViewOf(sec)
		op.Object, op.Project = repoRBACObject(v.Kind, v.Project, v.rawURL), v.Project
		if err := s.settingsAllowed(c, rbac.ResourceRepositories, rbac.ActionUpdate, op.Object, v.rawURL); err != nil {
			return err
		}
		if err := s.settingsAllowed(c, rbac.ResourceRepositories, rbac.ActionUpdate, repoRBACObject(v.Kind, e.Project, v.rawURL), v.rawURL); err != nil {
			return err
		}
		if e.Name != "" && v.Kind == secretTypeRepoCreds {
			return badSetting("name: a credential template has no name (Argo CD reads none from repo-creds Secrets)")
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
		return wrapSecretErr("repository", r.PathValue("id"), err)
	}
	return s.ns.waitSecret(ctx, written.Name, written.ResourceVersion)
}

// apiDeleteRepo is POST /api/v1/repositories/{id}/delete: deletes the
// Secret, for a caller with "repositories, delete" on it.
func (s *server) apiDeleteRepo(w http.ResponseWriter, r *http.Request, c caller) {
	op := settingsOp{Action: "repository.delete", Resource: rbac.ResourceRepositories, Details: map[string]any{"secret": r.PathValue("id")}}
	err := s.deleteRepo(r, c, &op)
	s.finishSetting(w, c, op, map[string]string{"id": r.PathValue("id")}, err)
}

func (s *server) deleteRepo(r *http.Request, c caller, op *settingsOp) error {
	if err := s.settingsWritable(); err != nil {
		return err
	}
	ctx, cancel := settingsContext(r)
	defer cancel()
	sec, err := s.repoSecret(ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	v := repoViewOf(sec)
	op.Object, op.Project = repoRBACObject(v.Kind, v.Project, v.rawURL), v.Project
	if err := s.settingsAllowed(c, rbac.ResourceRepositories, rbac.ActionDelete, op.Object, v.rawURL); err != nil {
		return err
	}
	pre := metav1.Preconditions{UID: &sec.UID}
	if err := s.ns.cl.Delete(ctx, sec, &client.DeleteOptions{Preconditions: &pre}); err != nil {
		return wrapSecretErr("repository", sec.Name, err)
	}
	return s.ns.waitSecret(ctx, sec.Name, "")
}

// wrapSecretErr names the Secret of a failed write; a settingsError
// passes as is.
func wrapSecretErr(what, name string, err error) error {
	if _, ok := err.(*settingsError); ok {
		return err
	}
	return fmt.Errorf("%s Secret %s: %w", what, name, err)
}

// waitSecret waits until the namespace's cache has Secret name at
// resourceVersion rv ("" : until it is gone), so that the page read next
// shows the write.
func (b *nsBackend) waitSecret(ctx context.Context, name, rv string) error {
	return b.waitCached(ctx, func() (string, bool, error) {
		sec := &corev1.Secret{}
		err := b.cache.Get(ctx, client.ObjectKey{Namespace: b.ns, Name: name}, sec)
		if apierrors.IsNotFound(err) {
			return "", false, nil
		}
		return sec.ResourceVersion, true, err
	}, rv)
}
