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

// LibraryVersion returns "module@version" of a module linked into the
// binary (from its build information), or "module@unknown". Renderers put
// it in their Identity so that upgrading a tool's library misses the cache.
func LibraryVersion(module string) string {
	if v, ok := buildDeps()[module]; ok {
		return module + "@" + v
	}
	return module + "@unknown"
}
