package render

import (
	"runtime/debug"
	"sync"
)

var buildDeps = sync.OnceValue(func() map[string]string {
	deps := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			v := d.Version
			if d.Replace != nil {
				v = d.Replace.Path + "@" + d.Replace.Version
			}
			deps[d.Path] = v
		}
	}
	return deps
})

// pinnedVersions are the versions go.mod requires, for binaries built
// without module information (test binaries among them). A test keeps them
// equal to go.mod.
var pinnedVersions = map[string]string{
	"helm.sh/helm/v3":              "v3.22.0",
	"sigs.k8s.io/kustomize/api":    "v0.21.2",
	"github.com/google/go-jsonnet": "v0.22.0",
	"sigs.k8s.io/yaml":             "v1.6.0",
}

// LibraryVersion returns "module@version" of a module linked into the
// binary: from its build information, else from the versions this package
// was built against, else "module@unknown". Renderers put it in their
// Identity so that upgrading a tool's library misses the cache.
func LibraryVersion(module string) string {
	if v, ok := buildDeps()[module]; ok {
		return module + "@" + v
	}
	if v, ok := pinnedVersions[module]; ok {
		return module + "@" + v
	}
	return module + "@unknown"
}
