package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// The names Argo CD gives the configuration's objects.
const (
	ConfigMapName = "argocd-notifications-cm"
	SecretName    = "argocd-notifications-secret"
)

// Config is a loaded argocd-notifications-cm: compiled triggers and
// templates, built services, default triggers, subscriptions and context.
// It is immutable and safe for concurrent use.
type Config struct {
	triggers  map[string]*Trigger
	templates map[string]*Template
	services  map[string]configuredService
	// defaultTriggers are defaultTriggers; byService are
	// defaultTriggers.<service>.
	defaultTriggers []string
	byService       map[string][]string
	subscriptions   []Subscription
	context         map[string]string
	redact          redactor
	repo            RepoService
	// skipped are the triggers left out (see SkippedError).
	skipped []*ConfigError
	// ignored are the fields of entries that Argo CD ignores (see Ignored).
	ignored []*ConfigError
}

type configuredService struct {
	typ string
	svc Service
}

// Subscription is one entry of the ConfigMap's "subscriptions": every
// Application that Selector selects is subscribed to Triggers (default:
// the default triggers) for Recipients ("service:recipient").
type Subscription struct {
	// Recipients are "service:recipient" destinations.
	Recipients []string `json:"recipients"`
	// Triggers are the triggers subscribed to; empty means the default
	// triggers.
	Triggers []string `json:"triggers,omitempty"`
	// Selector is a label selector of the Applications subscribed; empty
	// selects every one.
	Selector string `json:"selector,omitempty"`
	selector labels.Selector
}

// LoadOptions configure Load.
type LoadOptions struct {
	// ServiceTypes add service types (or replace built-in ones, those of
	// ServiceTypes()) by the <type> of service.<type>[.<name>].
	ServiceTypes map[string]NewServiceFunc
	// Repo answers repo.GetCommitMetadata and repo.GetAppDetails in
	// expressions and templates. Nil: those helpers fail when called.
	Repo RepoService
}

// DefaultLoadOptions are the built-in service types only.
func DefaultLoadOptions() LoadOptions { return LoadOptions{} }

// Load builds a Config from the data of the ConfigMap and of the Secret
// (nil when there is none). Every entry is checked: a trigger that does not
// compile or sends a template that does not exist, a template that does not
// parse, a service of an unknown type or with an unknown field, a "$key"
// the secret does not have, an unknown key: each is a *ConfigError (or
// *MissingSecretError) naming the entry.
//
// As in Argo CD, which logs a trigger it cannot use and goes on without
// it, bad triggers do not refuse the ConfigMap: when they are its only
// problems, Load returns the Config without them and a *SkippedError
// naming each (Config.Skipped lists them too); defaultTriggers and
// subscriptions may still name them. Any other problem refuses the whole
// ConfigMap: Load returns no Config and every problem, joined.
func Load(data, secret map[string]string, opts LoadOptions) (*Config, error) {
	c := &Config{triggers: map[string]*Trigger{}, templates: map[string]*Template{}, services: map[string]configuredService{},
		byService: map[string][]string{}, context: map[string]string{}, redact: newRedactor(secret), repo: opts.Repo}
	funcs := templateFuncs()
	var errs []error
	bad := func(kind, name string, err error) {
		errs = append(errs, &ConfigError{Kind: kind, Name: name, Err: errors.New(c.redact.String(err.Error()))})
	}
	skip := func(name string, err error) {
		c.skipped = append(c.skipped, &ConfigError{Kind: "trigger", Name: name, Err: errors.New(c.redact.String(err.Error()))})
	}
	keys := sortedKeys(data)
	for _, k := range keys {
		v := data[k]
		switch {
		case strings.HasPrefix(k, "trigger."):
			name := strings.TrimPrefix(k, "trigger.")
			t := &Trigger{Name: name}
			if err := yaml.UnmarshalStrict([]byte(v), &t.Conditions); err != nil {
				skip(name, err)
				continue
			}
			if err := t.compile(); err != nil {
				skip(name, err)
				continue
			}
			c.triggers[name] = t
		case strings.HasPrefix(k, "template."):
			name := strings.TrimPrefix(k, "template.")
			t, err := parseTemplate(name, v, funcs)
			if err != nil {
				bad("template", name, err)
				continue
			}
			t.repo = opts.Repo
			c.templates[name] = t
			for _, f := range t.Ignored() {
				c.ignore("template", name, f)
			}
		case strings.HasPrefix(k, "service."):
			typ, name, _ := strings.Cut(strings.TrimPrefix(k, "service."), ".")
			if name == "" {
				name = typ
			}
			if err := c.addService(typ, name, v, secret, opts.ServiceTypes); err != nil {
				var missing *MissingSecretError
				if errors.As(err, &missing) {
					errs = append(errs, &ConfigError{Kind: "service", Name: name, Err: missing})
					continue
				}
				bad("service", name, err)
			}
		case k == "defaultTriggers" || strings.HasPrefix(k, "defaultTriggers."):
			var list []string
			if err := yaml.UnmarshalStrict([]byte(v), &list); err != nil {
				bad("key", k, err)
				continue
			}
			if svc, ok := strings.CutPrefix(k, "defaultTriggers."); ok {
				c.byService[svc] = list
			} else {
				c.defaultTriggers = list
			}
		case k == "subscriptions":
			if err := yaml.UnmarshalStrict([]byte(v), &c.subscriptions); err != nil {
				bad("subscription", k, err)
			}
		case k == "context":
			if err := yaml.UnmarshalStrict([]byte(v), &c.context); err != nil {
				bad("key", k, err)
			}
		default:
			bad("key", k, fmt.Errorf("not a key of %s (trigger.*, template.*, service.*, defaultTriggers, subscriptions, context)", ConfigMapName))
		}
	}
	errs = append(errs, c.checkReferences()...)
	sort.Slice(c.skipped, func(i, j int) bool { return c.skipped[i].Name < c.skipped[j].Name })
	if len(errs) > 0 {
		for _, s := range c.skipped {
			errs = append(errs, s)
		}
		return nil, errors.Join(errs...)
	}
	if len(c.skipped) > 0 {
		return c, &SkippedError{Entries: c.skipped}
	}
	return c, nil
}

// Skipped returns the triggers Load left out, each with its reason.
func (c *Config) Skipped() []*ConfigError { return append([]*ConfigError(nil), c.skipped...) }

// Ignored returns the fields of loaded entries that Argo CD ignores: a
// field that a service type's options or a template's service block do not
// have (a typo, or an option of another version), each a *ConfigError
// naming the entry and the field. The entries work without them, as in
// Argo CD, which ignores them silently; a host reports them (the operator
// writes a Warning Event).
func (c *Config) Ignored() []*ConfigError { return append([]*ConfigError(nil), c.ignored...) }

func (c *Config) ignore(kind, name, field string) {
	c.ignored = append(c.ignored, &ConfigError{Kind: kind, Name: name,
		Err: fmt.Errorf("field %s is not an Argo CD field; ignored", field)})
}

// addService builds service.<typ>.<name>: a host's type of that name
// (hostTypes), else Argo CD's.
func (c *Config) addService(typ, name, v string, secret map[string]string, hostTypes map[string]NewServiceFunc) error {
	if _, dup := c.services[name]; dup {
		return fmt.Errorf("a service of this name is already configured")
	}
	newHost, isHost := hostTypes[typ]
	if _, isArgo := argoOptions[typ]; !isHost && !isArgo {
		known := append(ServiceTypes(), sortedKeys(hostTypes)...)
		sort.Strings(known)
		return fmt.Errorf("service type %q is not supported (supported: %s)", typ, strings.Join(known, ", "))
	}
	var raw map[string]any
	if err := yaml.Unmarshal([]byte(v), &raw); err != nil {
		return fmt.Errorf("not YAML: %w", err)
	}
	resolved, err := resolveSecrets(name, raw, secret)
	if err != nil {
		return err
	}
	m, _ := resolved.(map[string]any)
	if isHost {
		svc, err := newHost(name, m)
		if err != nil {
			return err
		}
		c.services[name] = configuredService{typ: typ, svc: svc}
		return nil
	}
	svc, ignored, err := newArgoService(typ, name, m)
	if err != nil {
		return err
	}
	for _, f := range ignored {
		c.ignore("service", name, f)
	}
	c.services[name] = configuredService{typ: typ, svc: svc}
	return nil
}

// checkReferences checks the names triggers, default triggers and
// subscriptions use.
func (c *Config) checkReferences() []error {
	var errs []error
	for _, name := range sortedKeys(c.triggers) {
	conditions:
		for i, cond := range c.triggers[name].Conditions {
			for _, tmpl := range cond.Send {
				if _, ok := c.templates[tmpl]; !ok {
					// A trigger that cannot send is skipped like one that
					// does not compile.
					c.skipped = append(c.skipped, &ConfigError{Kind: "trigger", Name: name,
						Err: &UnknownError{Kind: "template", Name: tmpl, By: fmt.Sprintf("condition %d", i)}})
					delete(c.triggers, name)
					break conditions
				}
			}
		}
	}
	skipped := map[string]bool{}
	for _, s := range c.skipped {
		skipped[s.Name] = true
	}
	checkTriggers := func(by string, list []string) {
		for _, t := range list {
			if _, ok := c.triggers[t]; !ok && !skipped[t] {
				errs = append(errs, &ConfigError{Kind: "key", Name: by, Err: &UnknownError{Kind: "trigger", Name: t}})
			}
		}
	}
	checkTriggers("defaultTriggers", c.defaultTriggers)
	for _, svc := range sortedKeys(c.byService) {
		if _, ok := c.services[svc]; !ok {
			errs = append(errs, &ConfigError{Kind: "key", Name: "defaultTriggers." + svc, Err: &UnknownError{Kind: "service", Name: svc}})
		}
		checkTriggers("defaultTriggers."+svc, c.byService[svc])
	}
	for i := range c.subscriptions {
		s := &c.subscriptions[i]
		name := fmt.Sprintf("subscriptions[%d]", i)
		checkTriggers(name, s.Triggers)
		for _, r := range s.Recipients {
			svc, _, ok := strings.Cut(r, ":")
			if _, known := c.services[svc]; !ok || !known {
				errs = append(errs, &ConfigError{Kind: "subscription", Name: name, Err: &UnknownError{Kind: "service", Name: svc}})
			}
		}
		sel, err := labels.Parse(s.Selector)
		if err != nil {
			errs = append(errs, &ConfigError{Kind: "subscription", Name: name, Err: err})
			continue
		}
		s.selector = sel
	}
	return errs
}

// LoadManifests builds a Config from the YAML (or JSON) manifests of the
// ConfigMap and the Secret (secret may be nil). The Secret's data (base64)
// and stringData are both read.
func LoadManifests(configMap, secret []byte, opts LoadOptions) (*Config, error) {
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(configMap, &cm); err != nil {
		return nil, fmt.Errorf("%s: %w", ConfigMapName, err)
	}
	if cm.Kind != "" && cm.Kind != "ConfigMap" {
		return nil, fmt.Errorf("%s: kind is %s, want ConfigMap", ConfigMapName, cm.Kind)
	}
	var data map[string]string
	if secret != nil {
		var s corev1.Secret
		if err := yaml.Unmarshal(secret, &s); err != nil {
			// The decoder's message may quote the secret's text.
			return nil, fmt.Errorf("%s: not a valid Secret manifest", SecretName)
		}
		if s.Kind != "" && s.Kind != "Secret" {
			return nil, fmt.Errorf("%s: kind is %s, want Secret", SecretName, s.Kind)
		}
		data = secretData(&s)
	}
	return Load(cm.Data, data, opts)
}

// LoadFiles is LoadManifests of the files at configMapPath and secretPath
// ("" when there is no secret).
func LoadFiles(configMapPath, secretPath string, opts LoadOptions) (*Config, error) {
	cm, err := os.ReadFile(configMapPath)
	if err != nil {
		return nil, err
	}
	var secret []byte
	if secretPath != "" {
		if secret, err = os.ReadFile(secretPath); err != nil {
			return nil, err
		}
	}
	c, err := LoadManifests(cm, secret, opts)
	if err != nil {
		return c, fmt.Errorf("%s: %w", configMapPath, err)
	}
	return c, nil
}

// LoadFromCluster reads argocd-notifications-cm and (if it exists)
// argocd-notifications-secret from namespace, within 30 seconds unless ctx
// ends sooner.
func LoadFromCluster(ctx context.Context, client kubernetes.Interface, namespace string, opts LoadOptions) (*Config, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cm, err := client.CoreV1().ConfigMaps(namespace).Get(ctx, ConfigMapName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("configmap %s/%s: %w", namespace, ConfigMapName, err)
	}
	var data map[string]string
	s, err := client.CoreV1().Secrets(namespace).Get(ctx, SecretName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("secret %s/%s: %w", namespace, SecretName, err)
	default:
		data = secretData(s)
	}
	c, err := Load(cm.Data, data, opts)
	if err != nil {
		return c, fmt.Errorf("configmap %s/%s: %w", namespace, ConfigMapName, err)
	}
	return c, nil
}

func secretData(s *corev1.Secret) map[string]string {
	out := make(map[string]string, len(s.Data)+len(s.StringData))
	for k, v := range s.Data {
		out[k] = string(v)
	}
	for k, v := range s.StringData {
		out[k] = v
	}
	return out
}

// Trigger returns the trigger of that name.
func (c *Config) Trigger(name string) (*Trigger, error) {
	if t, ok := c.triggers[name]; ok {
		return t, nil
	}
	return nil, &UnknownError{Kind: "trigger", Name: name}
}

// Template returns the template of that name.
func (c *Config) Template(name string) (*Template, error) {
	if t, ok := c.templates[name]; ok {
		return t, nil
	}
	return nil, &UnknownError{Kind: "template", Name: name}
}

// Triggers returns the names of the triggers, sorted.
func (c *Config) Triggers() []string { return sortedKeys(c.triggers) }

// Services returns the names of the services, sorted.
func (c *Config) Services() []string { return sortedKeys(c.services) }

// ServiceType returns the type of the service name ("webhook", "slack",
// ...), and whether it exists.
func (c *Config) ServiceType(name string) (string, bool) {
	s, ok := c.services[name]
	return s.typ, ok
}

// Context is the ConfigMap's context: values templates see as .context.
func (c *Config) Context() map[string]string { return c.context }

// Redact masks the values of the secret in s.
func (c *Config) Redact(s string) string { return c.redact.String(s) }

// RenderFor renders template name for the destination to.
func (c *Config) RenderFor(name string, app map[string]any, to Destination) (Message, error) {
	return c.RenderAll([]string{name}, app, to)
}

// RenderAll renders the templates names, in order, into one message for
// the destination to, as Argo CD renders the templates of one trigger
// condition's send: each renders its fields over what the ones before it
// rendered (its message only when that is not empty).
func (c *Config) RenderAll(names []string, app map[string]any, to Destination) (Message, error) {
	msg := Message{Template: strings.Join(names, ",")}
	vars := templateVars(app, c.context, to.Service, to.Recipient, c.repo)
	for _, name := range names {
		t, err := c.Template(name)
		if err != nil {
			return Message{}, err
		}
		if err := t.renderInto(&msg, vars); err != nil {
			return Message{}, err
		}
	}
	return msg, nil
}

// String names what the configuration holds, never a secret.
func (c *Config) String() string {
	return fmt.Sprintf("notify.Config{triggers: %v, templates: %v, services: %v}", c.Triggers(), sortedKeys(c.templates), c.Services())
}

// GoString is String: %#v prints no secret either.
func (c *Config) GoString() string { return c.String() }

// MarshalJSON marshals what String says: the names, never a secret.
func (c *Config) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"triggers": c.Triggers(), "templates": sortedKeys(c.templates), "services": c.Services()})
}
