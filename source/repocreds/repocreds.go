package repocreds

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source"
)

// Label keys and values of Argo CD's repository Secrets.
const (
	SecretTypeLabel     = "argocd.argoproj.io/secret-type"
	TypeRepository      = "repository"
	TypeRepoCreds       = "repo-creds"
	TypeRepositoryWrite = "repository-write"
	TypeRepoWriteCreds  = "repo-write-creds"
	TLSCertsConfig      = "argocd-tls-certs-cm"
	KnownHostsConfig    = "argocd-ssh-known-hosts-cm"
)

// errInvalid is the sentinel of a malformed field.
var errInvalid = source.ErrInvalidRepository

// Repository is one repository or credential template as a Secret
// describes it.
type Repository struct {
	// Secret is the Secret's namespace/name, for messages.
	Secret string
	// URL is the repository URL (for a template, a URL prefix).
	URL string
	// Type is "git" (default; "oci" for an oci:// URL without a type),
	// "helm" or "oci".
	Type string
	// Name and Project are Argo CD's display name and project scoping.
	Name, Project string
	// Write is set for the source hydrator's write credentials
	// (repository-write and repo-write-creds Secrets), which serve its
	// pushes (Store.WriteForProject) and never a read.
	Write bool
	// Credentials are the Secret's own credentials and settings (nil when
	// it has none); the tokens of GitHub Apps, Azure and Google Cloud are
	// minted when the repository is looked up.
	Credentials *source.Credentials
	// Err is the Secret's malformed field, if any (a *FieldError): the
	// lookups it serves carry it in source.Credentials.Err.
	Err error

	set settings
}

// Options configure how Secrets are read. Start from DefaultOptions.
type Options struct {
	// Azure is the workload identity of the Secrets that set
	// useAzureWorkloadIdentity. DefaultOptions reads it from the
	// process's environment.
	Azure AzureWorkloadIdentity
	// TokenTimeout bounds each request to a token endpoint (GitHub,
	// Microsoft Entra ID, a registry's token exchange, Google). Default
	// 30 s.
	TokenTimeout time.Duration
	// Tokens, when set, keeps token minters across the Stores read with
	// these Options (a host that reloads its Secrets); nil: each Store
	// keeps its own.
	Tokens *TokenCache
}

// DefaultOptions returns the process's Azure workload identity
// (AzureWorkloadIdentityFromEnv(os.Getenv)), a 30 s token timeout and no
// shared token cache.
func DefaultOptions() Options {
	return Options{Azure: AzureWorkloadIdentityFromEnv(os.Getenv), TokenTimeout: 30 * time.Second}
}

// Store answers which credentials a repository URL uses. Its
// configuration is immutable; it is safe for concurrent use.
type Store struct {
	opts    Options
	mu      sync.Mutex
	lastErr error

	repos          []Repository // repository Secrets
	templates      []Repository // repo-creds, longest prefix first
	writeRepos     []Repository // repository-write Secrets
	writeTemplates []Repository // repo-write-creds Secrets
	warnings       []Warning
	caByHost       map[string][]byte
	knownHost      []byte
}

// LoadFile reads Secrets and ConfigMaps from a YAML file (documents of
// other kinds, and Secrets without the secret-type label, are skipped),
// with DefaultOptions.
func LoadFile(path string) (*Store, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Load(path, data)
}

// Load reads Secrets and ConfigMaps from a YAML stream named file, with
// DefaultOptions.
func Load(file string, data []byte) (*Store, error) { return LoadWith(file, data, DefaultOptions()) }

// LoadWith is Load with opts.
func LoadWith(file string, data []byte, opts Options) (*Store, error) {
	objs, err := resource.Decode(file, data, resource.DecodeOptions{})
	if err != nil {
		return nil, err
	}
	return FromObjectsWith(objs, opts)
}

// LoadNamespace lists the repository Secrets and the two ConfigMaps of a
// namespace (Argo CD's own, usually "argocd"), with DefaultOptions.
func LoadNamespace(ctx context.Context, cs kubernetes.Interface, namespace string) (*Store, error) {
	objs, err := namespaceObjects(ctx, cs, namespace)
	if err != nil {
		return nil, err
	}
	return FromObjects(objs)
}

// LoadNamespaceSkipping is LoadNamespace for a host that keeps serving
// while one Secret is wrong: each Secret that cannot be read at all (it
// has no url) is left out and returned in bad (keyed by namespace/name,
// each error naming the Secret and the field, never a value); err is set
// only when the namespace could not be listed. A Secret with a field that
// has no effect here, or a malformed one, is loaded: see Store.Warnings.
func LoadNamespaceSkipping(ctx context.Context, cs kubernetes.Interface, namespace string) (s *Store, bad map[string]error, err error) {
	return LoadNamespaceWith(ctx, cs, namespace, DefaultOptions())
}

// LoadNamespaceWith is LoadNamespaceSkipping with opts.
func LoadNamespaceWith(ctx context.Context, cs kubernetes.Interface, namespace string, opts Options) (s *Store, bad map[string]error, err error) {
	objs, err := namespaceObjects(ctx, cs, namespace)
	if err != nil {
		return nil, nil, err
	}
	s, bad = fromObjects(objs, opts)
	return s, bad, nil
}

// secretTypes are the secret-type label values read.
var secretTypes = []string{TypeRepository, TypeRepoCreds, TypeRepositoryWrite, TypeRepoWriteCreds}

// namespaceObjects lists the repository Secrets and the two ConfigMaps of
// a namespace as objects.
func namespaceObjects(ctx context.Context, cs kubernetes.Interface, namespace string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	secrets, err := cs.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{LabelSelector: SecretTypeLabel + " in (" + strings.Join(secretTypes, ",") + ")"})
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

// FromObjects builds a Store from Secret and ConfigMap objects with
// DefaultOptions; the first Secret (by namespace/name) that cannot be read
// at all (no url) is the error.
func FromObjects(objs []*unstructured.Unstructured) (*Store, error) {
	return FromObjectsWith(objs, DefaultOptions())
}

// FromObjectsWith is FromObjects with opts.
func FromObjectsWith(objs []*unstructured.Unstructured, opts Options) (*Store, error) {
	s, bad := fromObjects(objs, opts)
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
func fromObjects(objs []*unstructured.Unstructured, opts Options) (*Store, map[string]error) {
	def := DefaultOptions()
	if opts.TokenTimeout <= 0 {
		opts.TokenTimeout = def.TokenTimeout
	}
	if opts.Tokens == nil {
		opts.Tokens = NewTokenCache()
	}
	s := &Store{opts: opts, caByHost: map[string][]byte{}}
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
			if !slices.Contains(secretTypes, typ) {
				continue
			}
			creds := typ == TypeRepoCreds || typ == TypeRepoWriteCreds
			r, warnings, err := secretRepository(id, o, creds)
			s.warnings = append(s.warnings, warnings...)
			if err != nil {
				bad[id] = err
				continue
			}
			switch typ {
			case TypeRepository:
				s.repos = append(s.repos, r)
			case TypeRepoCreds:
				s.templates = append(s.templates, r)
			case TypeRepositoryWrite, TypeRepoWriteCreds:
				r.Write = true
				if typ == TypeRepositoryWrite {
					s.writeRepos = append(s.writeRepos, r)
				} else {
					s.writeTemplates = append(s.writeTemplates, r)
				}
			}
		}
	}
	sort.SliceStable(s.templates, func(i, j int) bool {
		return len(normalizeURL(s.templates[i].URL)) > len(normalizeURL(s.templates[j].URL))
	})
	sort.SliceStable(s.warnings, func(i, j int) bool {
		a, b := s.warnings[i], s.warnings[j]
		return a.Secret < b.Secret || (a.Secret == b.Secret && a.Field < b.Field)
	})
	return s, bad
}

// secretRepository reads one Secret. Only a Secret without a url is an
// error (it cannot serve any repository); a field without effect is a
// Warning, and a malformed one the Repository's Err.
func secretRepository(id string, o *unstructured.Unstructured, creds bool) (Repository, []Warning, error) {
	f := readFields(id, o)
	set, warnings, ferr := f.parse(creds)
	r := Repository{Secret: id, URL: strings.TrimSpace(set.str("url")), Type: set.str("type"), Name: set.str("name"), Project: set.str("project"), set: set}
	if r.URL == "" {
		if reason, ok := f.bad["url"]; ok {
			return Repository{}, warnings, fmt.Errorf("repository secret %s: %s", id, reason)
		}
		return Repository{}, warnings, fmt.Errorf("repository secret %s: url is required", id)
	}
	if ferr != nil {
		r.Err = ferr
	}
	switch r.Type {
	case "":
		r.Type = "git"
		if strings.HasPrefix(strings.ToLower(r.URL), "oci://") {
			r.Type = "oci"
		}
	case "git", "helm", "oci":
	default:
		warnings = append(warnings, Warning{Secret: id, Field: "type", Message: "type " + strconv.Quote(r.Type) + " is not git, helm or oci: read as git"})
		r.Type = "git"
	}
	if c := staticCredentials(r.Type, set); c != nil {
		r.Credentials = c
	}
	return r, warnings, nil
}

// Repositories returns the repositories and templates read, credentials
// included (each prints redacted).
func (s *Store) Repositories() (repos, templates []Repository) {
	return append([]Repository{}, s.repos...), append([]Repository{}, s.templates...)
}

// String describes r without any secret.
func (r Repository) String() string {
	creds := "none"
	if r.Credentials != nil {
		creds = r.Credentials.String()
	}
	return fmt.Sprintf("repocreds.Repository(%s, %s, type %s, project %q, %s)", r.Secret, source.RedactURL(r.URL), r.Type, r.Project, creds)
}

// Format implements fmt.Formatter: every verb prints String.
func (r Repository) Format(f fmt.State, _ rune) { fmt.Fprint(f, r.String()) }

// WriteRepositories returns the repository-write and repo-write-creds
// Secrets read (the source hydrator's, see WriteForProject).
func (s *Store) WriteRepositories() (repos, templates []Repository) {
	return append([]Repository{}, s.writeRepos...), append([]Repository{}, s.writeTemplates...)
}

// Warnings returns, by Secret and field, the fields read without effect
// and the malformed ones of the Secrets loaded (never a value).
func (s *Store) Warnings() []Warning { return append([]Warning{}, s.warnings...) }

// String summarises the Store without any secret.
func (s *Store) String() string {
	return fmt.Sprintf("repocreds.Store(%d repositories, %d templates, %d CA hosts)", len(s.repos), len(s.templates), len(s.caByHost))
}

// Format implements fmt.Formatter: every verb prints String.
func (s *Store) Format(f fmt.State, _ rune) { fmt.Fprint(f, s.String()) }

// MarshalJSON encodes the summary only.
func (s *Store) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(s.String())), nil }
