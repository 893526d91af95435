package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/state"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// engineFlags are the engine settings a host sets in Go, as flags: the ref
// cache TTL, the recreate-on-immutable policy and Lua health overrides.
type engineFlags struct {
	stateNamespace stateNamespaceFlag
	// durableState makes the default --state-namespace writable: set by
	// the agent, the host whose state the other commands read.
	durableState        bool
	refCacheTTL         time.Duration
	recreateOnImmutable bool
	healthLua           healthLuaFlag
	sops                sopsFlags
}

func (f *engineFlags) register(fs *flag.FlagSet) {
	f.stateNamespace = stateNamespaceFlag{name: "default"}
	fs.Var(&f.stateNamespace, "state-namespace", "keep each app's sync history and last operation in ConfigMaps gitops-state-<app> of this namespace; the agent writes them, other commands only read them unless this flag is given; empty: in memory only")
	fs.DurationVar(&f.refCacheTTL, "ref-cache-ttl", time.Minute, "how long a Git repository's branches and tags are reused before it is asked again (never longer than the refresh interval)")
	fs.BoolVar(&f.recreateOnImmutable, "recreate-on-immutable", false, "delete and re-create an object whose update changes an immutable field (as Replace=true would), instead of failing the sync")
	f.sops.register(fs)
	fs.Var(&f.healthLua, "health-lua", "GROUP/KIND=FILE: judge that kind's health with this Lua script (Argo CD's health.lua contract); repeatable")
}

// apply sets the engine options the flags name. The state store is the
// ConfigMaps of --state-namespace, written only when the flag was given
// or durableState is set, else only read (writes kept in memory).
// --health-lua is applied with the other scripts
// (clusterFlags.applyScripts).
func (f engineFlags) apply(opts *gitops.Options, cfg *rest.Config) error {
	if ns := f.stateNamespace.name; ns != "" {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return fmt.Errorf("--state-namespace: %w", err)
		}
		var store state.Store = state.NewConfigMapStore(cs, ns)
		if !f.stateNamespace.set && !f.durableState {
			// Reading must not write: only a host (the agent) or an
			// explicit flag keeps state in the cluster.
			store = newReadOnlyState(store)
		}
		opts.State = store
	}
	if f.refCacheTTL > 0 {
		opts.RefCacheTTL = f.refCacheTTL
	}
	opts.Sync.RecreateOnImmutable = f.recreateOnImmutable
	return nil
}

// stateNamespaceFlag is --state-namespace: the namespace, and whether the
// user gave it (which makes the ConfigMaps writable for any command).
type stateNamespaceFlag struct {
	name string
	set  bool
}

// String implements flag.Value.
func (s *stateNamespaceFlag) String() string { return s.name }

// Set implements flag.Value.
func (s *stateNamespaceFlag) Set(v string) error {
	s.name, s.set = v, true
	return nil
}

// healthLuaFlag collects --health-lua GROUP/KIND=FILE, reading each file
// when the flag is parsed so that a missing file is a usage error.
type healthLuaFlag map[string]string

// String implements flag.Value: the kinds given.
func (h *healthLuaFlag) String() string {
	if h == nil {
		return ""
	}
	keys := make([]string, 0, len(*h))
	for k := range *h {
		keys = append(keys, k)
	}
	return strings.Join(keys, ",")
}

// Set implements flag.Value: it reads GROUP/KIND=FILE.
func (h *healthLuaFlag) Set(v string) error {
	kind, file, ok := strings.Cut(v, "=")
	if !ok || kind == "" || file == "" {
		return fmt.Errorf("want GROUP/KIND=FILE (for example apps/Deployment=deploy.lua), got %q", v)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if *h == nil {
		*h = healthLuaFlag{}
	}
	(*h)[health.ScriptKey(kind)] = string(data)
	return nil
}
