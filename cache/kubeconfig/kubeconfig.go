package kubeconfig

import (
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Context is one context of a kubeconfig file.
type Context struct {
	// Name is the context's name.
	Name string
	// Config reaches the context's cluster as its user.
	Config *rest.Config
}

// Load returns the client config of each named context of the kubeconfig
// file at path (all contexts, sorted by name, when contexts is empty).
// Errors name the file and the context, never credentials.
func Load(path string, contexts []string) ([]Context, error) {
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	if len(contexts) == 0 {
		for name := range raw.Contexts {
			contexts = append(contexts, name)
		}
		sort.Strings(contexts)
	}
	out := make([]Context, 0, len(contexts))
	for _, name := range contexts {
		if _, ok := raw.Contexts[name]; !ok {
			return nil, fmt.Errorf("kubeconfig %s: no context %q", path, name)
		}
		cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, name, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: context %q: %w", path, name, err)
		}
		out = append(out, Context{Name: name, Config: cfg})
	}
	return out, nil
}

// String names the context and its server, never a secret.
func (n Context) String() string {
	host := ""
	if n.Config != nil {
		host = n.Config.Host
	}
	return fmt.Sprintf("context(%s, %s, redacted)", n.Name, host)
}

// GoString implements fmt.GoStringer without secrets.
func (n Context) GoString() string { return n.String() }

// Format implements fmt.Formatter: every verb prints String, so that no
// verb reaches the tokens and keys of Config.
func (n Context) Format(f fmt.State, _ rune) { fmt.Fprint(f, n.String()) }

// MarshalJSON encodes String, never a secret.
func (n Context) MarshalJSON() ([]byte, error) { return json.Marshal(n.String()) }
