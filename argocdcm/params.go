package argocdcm

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kubegitops/gitops/engine"
)

// ParamsConfigMapName is the name of Argo CD's tuning ConfigMap, the
// command-line parameters of its components.
const ParamsConfigMapName = "argocd-cmd-params-cm"

// Params are the keys of an argocd-cmd-params-cm ConfigMap this
// engine implements, parsed by ParseParams and put into engine
// options by Apply. Zero fields were not set.
type Params struct {
	// StatusProcessors is controller.status.processors: apps refreshed at
	// once (Options.ReconcileWorkers; a host with its own reconcile loop,
	// such as the operator, uses it for its workers).
	StatusProcessors int
	// OperationProcessors is controller.operation.processors: sync
	// operations at once (Options.SyncWorkers).
	OperationProcessors int
	// RepoServerTimeout is controller.repo.server.timeout.seconds: the
	// bound of one render (Options.RenderTimeout).
	RepoServerTimeout time.Duration
	// RenderParallelism is reposerver.parallelism.limit: renders at once
	// (Options.RenderParallelism); negative when the key asks for no
	// limit (a value below 1).
	RenderParallelism int
	// ServerSideDiff is controller.diff.server.side (Options.ServerSideDiff),
	// nil when not set.
	ServerSideDiff *bool
	// SelfHealTimeout is controller.self.heal.timeout.seconds: the first
	// wait between two self-heal syncs of one revision
	// (autosync.Input.SelfHealTimeout, which a host's reconcile loop passes).
	SelfHealTimeout time.Duration
	// ApplicationNamespaces is application.namespaces, comma-separated
	// names (a host that serves several namespaces reads it).
	ApplicationNamespaces []string
	// Warnings list the keys of other Argo CD components (server,
	// repo-server transport, Dex, ApplicationSet and notifications
	// controllers, Redis, ...) that this engine does not use, one line
	// each, sorted.
	Warnings []string
}

// paramsOtherComponents are the prefixes of keys that configure Argo CD
// components other than the application controller and repo server's
// rendering: the engine is none of them, so they are listed in Warnings.
var paramsOtherComponents = []string{"server.", "dexserver.", "commitserver.", "applicationsetcontroller.",
	"notificationscontroller.", "redis.", "otlp.", "repo.server", "commit.server", "log.", "hydrator.",
	"reposerver.listen.", "reposerver.metrics.", "reposerver.log.", "reposerver.disable.tls", "reposerver.tls.",
	// The connection to a repo server and Argo CD's Redis caches, which
	// the engine (rendering in-process, with its own caches) does not have.
	"controller.repo.server.plaintext", "controller.repo.server.strict.tls", "controller.app.state.cache.expiration",
	"controller.default.cache.expiration", "reposerver.repo.cache.expiration", "reposerver.default.cache.expiration"}

// paramsUnsupported are the controller and repo-server keys whose
// behaviour this engine does not have: a value for one is refused with
// ErrUnsupported rather than ignored, unless it is the value
// this engine behaves as (given).
var paramsUnsupported = map[string]string{
	// The engine's self-heal backoff multiplies by 3 up to
	// MaxSelfHealBackoff (5 minutes), as Argo CD's defaults do.
	"controller.self.heal.backoff.factor":      "3",
	"controller.self.heal.backoff.cap.seconds": "300",
	"controller.sync.timeout.seconds":          "0",
	"controller.resource.health.persist":       "false",
	"controller.sharding.algorithm":            "",
	"controller.kubectl.parallelism.limit":     "",
	"controller.k8sclient.retry.max":           "0",
	"controller.k8sclient.retry.base.backoff":  "",
	"controller.log.format":                    "",
	"controller.log.level":                     "",
	"controller.profile.enabled":               "false",
	"reposerver.enable.git.submodule":          "true",
	"reposerver.include.hidden.directories":    "",
	"reposerver.allow.oob.symlinks":            "false",
}

// ParseParams reads the data of an argocd-cmd-params-cm ConfigMap,
// the way ParsePartial reads argocd-cm: it returns the
// params of every key that parsed (never nil) and, joined, a
// *SettingError for each key whose value is malformed or asks for what
// the engine does not do (ErrUnsupported). Keys of other Argo CD
// components are listed in Warnings.
func ParseParams(data map[string]string) (*Params, error) {
	p := &Params{}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, key := range keys {
		if err := p.parseKey(key, strings.TrimSpace(data[key])); err != nil {
			errs = append(errs, &SettingError{ConfigMap: ParamsConfigMapName, Key: key, Err: err})
		}
	}
	return p, errors.Join(errs...)
}

// parseKey reads one key's value into p.
func (p *Params) parseKey(key, v string) error {
	var err error
	switch key {
	case "controller.status.processors":
		p.StatusProcessors, err = parsePositive(v)
	case "controller.operation.processors":
		p.OperationProcessors, err = parsePositive(v)
	case "controller.repo.server.timeout.seconds":
		var n int
		if n, err = parsePositive(v); err == nil {
			p.RepoServerTimeout = time.Duration(n) * time.Second
		}
	case "reposerver.parallelism.limit":
		n, aerr := strconv.Atoi(v)
		if aerr != nil {
			return fmt.Errorf("%w: %q, want a whole number", ErrMalformed, v)
		}
		p.RenderParallelism = n
		if n < 1 {
			p.RenderParallelism = -1 // below 1: no limit
		}
	case "controller.diff.server.side":
		var b bool
		if b, err = parseBool(v); err == nil {
			p.ServerSideDiff = &b
		}
	case "controller.self.heal.timeout.seconds":
		var n int
		if n, err = strconv.Atoi(v); err != nil || n < 0 {
			return fmt.Errorf("%w: %q, want whole seconds", ErrMalformed, v)
		}
		p.SelfHealTimeout = time.Duration(n) * time.Second
	case "application.namespaces":
		for _, ns := range strings.Split(v, ",") {
			if ns = strings.TrimSpace(ns); ns != "" {
				p.ApplicationNamespaces = append(p.ApplicationNamespaces, ns)
			}
		}
	default:
		if same, listed := paramsUnsupported[key]; listed {
			if v == "" || v == same {
				return nil // the engine's own behaviour
			}
			return fmt.Errorf("%w: %q", ErrUnsupported, v)
		}
		for _, prefix := range paramsOtherComponents {
			if strings.HasPrefix(key, prefix) {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s %s: a setting of another Argo CD component, not used by the engine", ParamsConfigMapName, key))
				return nil
			}
		}
		return fmt.Errorf("%w: unknown key", ErrUnsupported)
	}
	return err
}

// Apply puts the params into opts: controller.status.processors into
// Options.ReconcileWorkers, controller.operation.processors into
// Options.SyncWorkers, controller.repo.server.timeout.seconds into
// Options.RenderTimeout, reposerver.parallelism.limit into
// Options.RenderParallelism (no limit: 1024, or ReconcileWorkers when
// larger), and controller.diff.server.side into
// Options.ServerSideDiff. Unset keys leave opts as it is.
func (p *Params) Apply(opts *engine.Options) {
	if p.StatusProcessors > 0 {
		opts.ReconcileWorkers = p.StatusProcessors
	}
	if p.OperationProcessors > 0 {
		opts.SyncWorkers = p.OperationProcessors
	}
	if p.RepoServerTimeout > 0 {
		opts.RenderTimeout = p.RepoServerTimeout
	}
	switch {
	case p.RenderParallelism > 0:
		opts.RenderParallelism = p.RenderParallelism
	case p.RenderParallelism < 0:
		opts.RenderParallelism = max(opts.ReconcileWorkers, 1024)
	}
	if p.ServerSideDiff != nil {
		opts.ServerSideDiff = *p.ServerSideDiff
	}
}

// parsePositive reads a whole number of at least 1.
func parsePositive(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: %q, want a whole number of at least 1", ErrMalformed, v)
	}
	return n, nil
}
