package cache

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Registry holds one ClusterCache per destination cluster, for hosts that
// manage several. A cache is reachable by its name and by its server URL
// (Argo CD's destination.name and destination.server), and is started on
// first use and kept until Close.
type Registry struct {
	opts Options

	mu      sync.Mutex
	byName  map[string]*registered
	byURL   map[string]*registered
	ctx     context.Context
	cancel  context.CancelFunc
	stopped bool
}

type registered struct {
	name  string
	cfg   *rest.Config
	once  sync.Once
	cache *ClusterCache
	err   error
}

// NewRegistry returns an empty registry whose caches use opts (each with
// Name set to its cluster's name).
func NewRegistry(opts Options) *Registry {
	ctx, cancel := context.WithCancel(context.Background())
	return &Registry{opts: opts, byName: map[string]*registered{}, byURL: map[string]*registered{}, ctx: ctx, cancel: cancel}
}

// NewRegistryFromKubeconfig registers one cluster per context of the
// kubeconfig file at path (all contexts when contexts is empty), named after
// the context.
func NewRegistryFromKubeconfig(path string, contexts []string, opts Options) (*Registry, error) {
	named, err := LoadKubeconfig(path, contexts)
	if err != nil {
		return nil, err
	}
	r := NewRegistry(opts)
	for _, n := range named {
		if err := r.Add(n.Name, n.Config); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// NamedConfig is one context of a kubeconfig file.
type NamedConfig struct {
	// Name is the context's name.
	Name string
	// Config reaches the context's cluster as its user.
	Config *rest.Config
}

// LoadKubeconfig returns the client config of each named context of the
// kubeconfig file at path (all contexts, sorted by name, when contexts is
// empty). Errors name the file and the context, never credentials.
func LoadKubeconfig(path string, contexts []string) ([]NamedConfig, error) {
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("cache: kubeconfig %s: %w", path, err)
	}
	if len(contexts) == 0 {
		for name := range raw.Contexts {
			contexts = append(contexts, name)
		}
		sort.Strings(contexts)
	}
	out := make([]NamedConfig, 0, len(contexts))
	for _, name := range contexts {
		if _, ok := raw.Contexts[name]; !ok {
			return nil, fmt.Errorf("cache: kubeconfig %s: no context %q", path, name)
		}
		cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, name, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("cache: kubeconfig %s: context %q: %w", path, name, err)
		}
		out = append(out, NamedConfig{Name: name, Config: cfg})
	}
	return out, nil
}

// Add registers a cluster under name and under its server URL.
func (r *Registry) Add(name string, cfg *rest.Config) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byName[name]; dup {
		return fmt.Errorf("cache: cluster %q registered twice", name)
	}
	reg := &registered{name: name, cfg: rest.CopyConfig(cfg)}
	r.byName[name] = reg
	if _, dup := r.byURL[cfg.Host]; !dup {
		r.byURL[cfg.Host] = reg
	}
	return nil
}

// Destinations returns the registered cluster names, sorted.
func (r *Registry) Destinations() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Get returns the cache of destination (a name, or a server URL), starting
// it on first use; it waits for the first sync as long as ctx allows. A
// cache that failed to start is reported again on every call.
func (r *Registry) Get(ctx context.Context, destination string) (*ClusterCache, error) {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return nil, fmt.Errorf("cache: registry closed")
	}
	reg, ok := r.byName[destination]
	if !ok {
		reg, ok = r.byURL[destination]
	}
	r.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("cache: unknown destination %q", destination)
	}
	reg.once.Do(func() {
		opts := r.opts
		opts.Name = reg.name
		c, err := New(reg.cfg, opts)
		if err != nil {
			reg.err = err
			return
		}
		r.mu.Lock()
		reg.cache = c
		r.mu.Unlock()
		go func() {
			if err := c.Start(r.ctx); err != nil && r.ctx.Err() == nil {
				opts.Logger.Error(err, "cluster cache failed to start", "cluster", reg.name)
			}
		}()
	})
	if reg.err != nil {
		return nil, fmt.Errorf("cache: cluster %q: %w", reg.name, reg.err)
	}
	if err := reg.cache.WaitForSync(ctx); err != nil {
		return nil, fmt.Errorf("cache: cluster %q: %w", reg.name, err)
	}
	return reg.cache, nil
}

// Close stops every started cache.
func (r *Registry) Close() {
	r.mu.Lock()
	r.stopped = true
	var started []*ClusterCache
	for _, reg := range r.byName {
		if reg.cache != nil {
			started = append(started, reg.cache)
		}
	}
	r.mu.Unlock()
	r.cancel()
	for _, c := range started {
		c.Stop()
	}
}

// String names the context and its server, never a secret.
func (n NamedConfig) String() string {
	host := ""
	if n.Config != nil {
		host = n.Config.Host
	}
	return fmt.Sprintf("context(%s, %s, redacted)", n.Name, host)
}

// GoString implements fmt.GoStringer without secrets.
func (n NamedConfig) GoString() string { return n.String() }

// Format implements fmt.Formatter: every verb prints String, so that no
// verb reaches the tokens and keys of Config.
func (n NamedConfig) Format(f fmt.State, _ rune) { fmt.Fprint(f, n.String()) }

// MarshalJSON encodes String, never a secret.
func (n NamedConfig) MarshalJSON() ([]byte, error) { return json.Marshal(n.String()) }
