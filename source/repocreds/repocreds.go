package repocreds

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source"
)

// Label keys and values of Argo CD's repository Secrets.
const (
	SecretTypeLabel  = "argocd.argoproj.io/secret-type"
	TypeRepository   = "repository"
	TypeRepoCreds    = "repo-creds"
	TLSCertsConfig   = "argocd-tls-certs-cm"
	KnownHostsConfig = "argocd-ssh-known-hosts-cm"
)

// Repository is one repository or credential template as a Secret
// describes it.
type Repository struct {
	// Secret is the Secret's namespace/name, for messages.
	Secret string
	// URL is the repository URL (for a template, a URL prefix).
	URL string
	// Type is "git" (default), "helm" or "oci".
	Type string
	// Name and Project are Argo CD's display name and project scoping.
	Name, Project string
	// Credentials are the Secret's credentials (nil when it has none).
	Credentials *source.Credentials
	// GitHubApp, when the Secret names a GitHub App, mints the token that
	// For returns as the password of user x-access-token.
	GitHubApp *GitHubApp
}

// Store answers which credentials a repository URL uses. Its
// configuration is immutable; it is safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	lastErr error

	repos     []Repository // by normalised URL
	templates []Repository // longest prefix first
	caByHost  map[string][]byte
	knownHost []byte
}

// UnsupportedFieldError is a Secret field Argo CD defines that this
// package does not implement.
type UnsupportedFieldError struct {
	Secret, Field string
}

// Error implements error.
func (e *UnsupportedFieldError) Error() string {
	return fmt.Sprintf("repository secret %s: field %q is not supported (remove it or provide the credentials another way)", e.Secret, e.Field)
}

// UnknownFieldError is a Secret field Argo CD does not define (a typo
// such as passwd, or another tool's key): it is refused rather than
// ignored, so that credentials never silently go unused.
type UnknownFieldError struct {
	Secret, Field string
}

// Error implements error.
func (e *UnknownFieldError) Error() string {
	return fmt.Sprintf("repository secret %s: field %q is not a field of Argo CD's repository secrets (check its spelling)", e.Secret, e.Field)
}

// unsupported are Argo CD's Secret fields this package refuses; the
// boolean ones among them (unsupportedBool) are accepted when false, which
// is what leaving them out means.
var (
	unsupported     = []string{"gcpServiceAccountKey", "useAzureWorkloadIdentity", "forceHttpBasicAuth", "enableLfs", "insecure"}
	unsupportedBool = map[string]bool{"useAzureWorkloadIdentity": true, "forceHttpBasicAuth": true, "enableLfs": true, "insecure": true}
)

// known are the fields of Argo CD's repository and repo-creds Secrets
// this package reads.
var known = map[string]bool{
	"url": true, "type": true, "name": true, "project": true,
	"username": true, "password": true, "bearerToken": true, "sshPrivateKey": true,
	"tlsClientCertData": true, "tlsClientCertKey": true, "proxy": true, "noProxy": true,
	"enableOCI": true, "insecureIgnoreHostKey": true, "insecureOCIForceHttp": true,
	"githubAppID": true, "githubAppInstallationID": true, "githubAppPrivateKey": true, "githubAppEnterpriseBaseUrl": true,
}

// checkFields refuses, by name, the fields this package does not
// implement (an *UnsupportedFieldError) and those Argo CD does not define
// (an *UnknownFieldError), in the order of their names.
func checkFields(id string, fields map[string]string) error {
	for _, f := range unsupported {
		v := fields[f]
		if v == "" {
			continue
		}
		if b, err := strconv.ParseBool(v); unsupportedBool[f] && err == nil && !b {
			continue
		}
		return &UnsupportedFieldError{Secret: id, Field: f}
	}
	names := make([]string, 0, len(fields))
	for f := range fields {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		if !known[f] && !slices.Contains(unsupported, f) {
			return &UnknownFieldError{Secret: id, Field: f}
		}
	}
	return nil
}

// LoadFile reads Secrets and ConfigMaps from a YAML file (documents of
// other kinds, and Secrets without the secret-type label, are skipped).
func LoadFile(path string) (*Store, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Load(path, data)
}

// Load reads Secrets and ConfigMaps from a YAML stream named file.
func Load(file string, data []byte) (*Store, error) {
	objs, err := resource.Decode(file, data, resource.DecodeOptions{})
	if err != nil {
		return nil, err
	}
	return FromObjects(objs)
}

// LoadNamespace lists the repository Secrets and the two ConfigMaps of a
// namespace (Argo CD's own, usually "argocd").
func LoadNamespace(ctx context.Context, cs kubernetes.Interface, namespace string) (*Store, error) {
	objs, err := namespaceObjects(ctx, cs, namespace)
	if err != nil {
		return nil, err
	}
	return FromObjects(objs)
}

// LoadNamespaceSkipping is LoadNamespace for a host that keeps serving
// while one Secret is wrong: each Secret that cannot be read is left out
// and returned in bad (keyed by namespace/name, each error naming the
// Secret and the field, never a value); err is set only when the namespace
// could not be listed.
func LoadNamespaceSkipping(ctx context.Context, cs kubernetes.Interface, namespace string) (s *Store, bad map[string]error, err error) {
	objs, err := namespaceObjects(ctx, cs, namespace)
	if err != nil {
		return nil, nil, err
	}
	s, bad = fromObjects(objs)
	return s, bad, nil
}

// namespaceObjects lists the repository Secrets and the two ConfigMaps of
// a namespace as objects.
func namespaceObjects(ctx context.Context, cs kubernetes.Interface, namespace string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	secrets, err := cs.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{LabelSelector: SecretTypeLabel + " in (" + TypeRepository + "," + TypeRepoCreds + ")"})
	if err != nil {
		return nil, fmt.Errorf("list repository secrets in %s: %w", namespace, err)
	}
	for i := range secrets.Items {
		s := &secrets.Items[i]
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret"}}
		u.SetNamespace(s.Namespace)
		u.SetName(s.Name)
		u.SetLabels(s.Labels)
		data := map[string]any{}
		for k, v := range s.Data {
			data[k] = base64.StdEncoding.EncodeToString(v)
		}
		u.Object["data"] = data
		objs = append(objs, u)
	}
	for _, name := range []string{TLSCertsConfig, KnownHostsConfig} {
		cm, err := cs.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			continue // absent: nothing configured
		}
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		u.SetNamespace(cm.Namespace)
		u.SetName(cm.Name)
		data := map[string]any{}
		for k, v := range cm.Data {
			data[k] = v
		}
		u.Object["data"] = data
		objs = append(objs, u)
	}
	return objs, nil
}

// FromObjects builds a Store from Secret and ConfigMap objects; the first
// Secret (by namespace/name) that cannot be read is the error.
func FromObjects(objs []*unstructured.Unstructured) (*Store, error) {
	s, bad := fromObjects(objs)
	if len(bad) > 0 {
		ids := make([]string, 0, len(bad))
		for id := range bad {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		return nil, bad[ids[0]]
	}
	return s, nil
}

// fromObjects builds a Store of the Secrets that can be read, and returns
// the errors of the others by namespace/name.
func fromObjects(objs []*unstructured.Unstructured) (*Store, map[string]error) {
	s := &Store{caByHost: map[string][]byte{}}
	bad := map[string]error{}
	for _, o := range objs {
		id := o.GetNamespace() + "/" + o.GetName()
		switch o.GetKind() {
		case "ConfigMap":
			data, _, _ := unstructured.NestedStringMap(o.Object, "data")
			switch o.GetName() {
			case TLSCertsConfig:
				for host, pem := range data {
					s.caByHost[strings.ToLower(host)] = []byte(pem)
				}
			case KnownHostsConfig:
				s.knownHost = []byte(data["ssh_known_hosts"])
			}
		case "Secret":
			typ := o.GetLabels()[SecretTypeLabel]
			if typ != TypeRepository && typ != TypeRepoCreds {
				continue
			}
			r, err := secretRepository(id, o)
			if err != nil {
				bad[id] = err
				continue
			}
			if typ == TypeRepository {
				s.repos = append(s.repos, r)
			} else {
				s.templates = append(s.templates, r)
			}
		}
	}
	sort.SliceStable(s.templates, func(i, j int) bool { return len(normalise(s.templates[i].URL)) > len(normalise(s.templates[j].URL)) })
	return s, bad
}

// secretRepository reads one Secret's fields (data, base64, overridden by
// stringData, as the API server merges them).
func secretRepository(id string, o *unstructured.Unstructured) (Repository, error) {
	fields := map[string]string{}
	data, _, _ := unstructured.NestedStringMap(o.Object, "data")
	for k, v := range data {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return Repository{}, fmt.Errorf("repository secret %s: data.%s is not base64", id, k)
		}
		fields[k] = string(b)
	}
	sdata, _, _ := unstructured.NestedStringMap(o.Object, "stringData")
	for k, v := range sdata {
		fields[k] = v
	}
	if err := checkFields(id, fields); err != nil {
		return Repository{}, err
	}
	r := Repository{Secret: id, URL: fields["url"], Type: fields["type"], Name: fields["name"], Project: fields["project"]}
	if r.URL == "" {
		return Repository{}, fmt.Errorf("repository secret %s: url is required", id)
	}
	if r.Type == "" {
		r.Type = "git"
	}
	if r.Type != "git" && r.Type != "helm" && r.Type != "oci" {
		return Repository{}, fmt.Errorf("repository secret %s: type %q is not git, helm or oci", id, r.Type)
	}
	c := source.Credentials{
		Username: fields["username"], Password: fields["password"], BearerToken: fields["bearerToken"],
		SSHPrivateKey: []byte(fields["sshPrivateKey"]), TLSClientCertData: []byte(fields["tlsClientCertData"]),
		TLSClientKeyData: []byte(fields["tlsClientCertKey"]),
		Proxy:            fields["proxy"], NoProxy: fields["noProxy"],
	}
	for _, b := range []struct {
		name string
		to   *bool
	}{{"enableOCI", &c.EnableOCI}, {"insecureIgnoreHostKey", &c.InsecureIgnoreHostKey}, {"insecureOCIForceHttp", &c.InsecureOCIForceHTTP}} {
		if v := fields[b.name]; v != "" {
			parsed, err := strconv.ParseBool(v)
			if err != nil {
				return Repository{}, fmt.Errorf("repository secret %s: %s is not a boolean", id, b.name)
			}
			*b.to = parsed
		}
	}
	if r.Type == "oci" {
		c.EnableOCI = true
	}
	if fields["githubAppID"] != "" || fields["githubAppPrivateKey"] != "" {
		app, err := newGitHubApp(id, fields)
		if err != nil {
			return Repository{}, err
		}
		r.GitHubApp = app
		// Rotating tokens of one installation share the caches of it.
		c.CacheIdentity = fmt.Sprintf("github-app:%s:%d:%d", app.baseURL, app.appID, app.installationID)
	}
	if c.Kind() != "none" || c.EnableOCI || c.InsecureOCIForceHTTP || c.Proxy != "" || r.GitHubApp != nil {
		r.Credentials = &c
	}
	return r, nil
}

// Repositories returns the repositories and templates read, credentials
// included (each prints redacted).
func (s *Store) Repositories() (repos, templates []Repository) {
	return append([]Repository{}, s.repos...), append([]Repository{}, s.templates...)
}

// String summarises the Store without any secret.
func (s *Store) String() string {
	return fmt.Sprintf("repocreds.Store(%d repositories, %d templates, %d CA hosts)", len(s.repos), len(s.templates), len(s.caByHost))
}

// Format implements fmt.Formatter: every verb prints String.
func (s *Store) Format(f fmt.State, _ rune) { fmt.Fprint(f, s.String()) }

// MarshalJSON encodes the summary only.
func (s *Store) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(s.String())), nil }

// normalise lowercases a URL and drops a trailing "/" and ".git", as
// Argo CD compares repository URLs.
func normalise(u string) string {
	u = strings.ToLower(strings.TrimSpace(u))
	u = strings.TrimSuffix(u, "/")
	return strings.TrimSuffix(u, ".git")
}

// hostOf returns the host name of a URL (scp-like and bare host/path
// forms included), lowercased.
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return strings.ToLower(u.Hostname())
	}
	rest := raw
	if at := strings.IndexByte(rest, '@'); at >= 0 {
		rest = rest[at+1:]
	}
	host, _, _ := strings.Cut(rest, "/")
	host, _, _ = strings.Cut(host, ":")
	return strings.ToLower(host)
}
