package clusters

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"

	"k8s.io/client-go/rest"
)

// Config is one destination: what the engine's ClusterConfig says.
type Config struct {
	// Name and Server are the names Applications may give it.
	Name, Server string
	// Config reaches the cluster; nil makes an offline destination.
	Config *rest.Config
	// KubeVersion and APIVersions describe an offline destination.
	KubeVersion string
	APIVersions []string
	// Namespaces, when not empty, are the only namespaces managed;
	// ClusterResources then lets cluster-scoped objects be managed too.
	Namespaces       []string
	ClusterResources bool
	// Project is the project the cluster is scoped to.
	Project string
}

// Same reports whether two configurations name and reach the same
// cluster the same way.
func Same(a, b Config) bool {
	if a.Name != b.Name || a.Server != b.Server || a.ClusterResources != b.ClusterResources || a.Project != b.Project ||
		!slices.Equal(a.Namespaces, b.Namespaces) || a.KubeVersion != b.KubeVersion || !slices.Equal(a.APIVersions, b.APIVersions) {
		return false
	}
	if a.Config == nil || b.Config == nil {
		return a.Config == b.Config
	}
	return sameConnection(a.Config, b.Config)
}

// sameConnection compares what reaches and authenticates to a cluster.
// Functions cannot be compared: a proxy is compared by the URL it gives
// for the server, Dial, WrapTransport and Transport by being set.
func sameConnection(a, b *rest.Config) bool {
	if !sameProxy(a.Proxy, b.Proxy, a.Host) || (a.Dial == nil) != (b.Dial == nil) ||
		(a.WrapTransport == nil) != (b.WrapTransport == nil) || (a.Transport == nil) != (b.Transport == nil) {
		return false
	}
	x, y := *a, *b
	for _, p := range []*rest.Config{&x, &y} {
		p.Proxy, p.Dial, p.WrapTransport, p.Transport = nil, nil, nil, nil
		p.WarningHandler, p.WarningHandlerWithContext = nil, nil
	}
	return reflect.DeepEqual(x, y)
}

func sameProxy(a, b func(*http.Request) (*url.URL, error), host string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	u, err := url.Parse(host)
	if err != nil {
		return false
	}
	req := &http.Request{URL: u}
	ua, erra := a(req)
	ub, errb := b(req)
	return erra == nil && errb == nil && fmt.Sprint(ua) == fmt.Sprint(ub)
}
