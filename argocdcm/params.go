package argocdcm

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kubegitops/gitops/autosync"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/render/builtin"
)

// ParamsConfigMapName is the name of Argo CD's tuning ConfigMap, the
// command-line parameters of its components.
const ParamsConfigMapName = "argocd-cmd-params-cm"

// Params are the argocd-cmd-params-cm keys of the components this module
// plays (ParamKeys says what each does), parsed by ParseParams; Apply puts
// the engine's into engine options, and a host (the operator) reads the
// others. Zero fields were not set.
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
	// DirectoryBytes is reposerver.max.combined.directory.manifests.size:
	// the bytes one directory render may read (ApplyTools).
	DirectoryBytes int64
	// ServerSideDiff is controller.diff.server.side (Options.ServerSideDiff),
	// nil when not set.
	ServerSideDiff *bool
	// SelfHealTimeout is controller.self.heal.timeout.seconds: the fixed
	// wait between two self-heals when the backoff is off.
	SelfHealTimeout time.Duration
	// SelfHealBackoff is controller.self.heal.backoff.* (Argo CD's
	// defaults for the keys not set), or, when
	// controller.self.heal.backoff.timeout.seconds is 0, the fixed wait of
	// controller.self.heal.timeout.seconds; never nil after ParseParams.
	SelfHealBackoff *autosync.Backoff
	// RepoErrorGracePeriod is controller.repo.error.grace.period.seconds:
	// how long a failing render leaves an app's status as it was (a host's
	// reconcile loop reads it).
	RepoErrorGracePeriod time.Duration
	// SyncTimeout is controller.sync.timeout.seconds: the bound of one sync
	// operation (Options.Sync.Timeout); negative for its 0 (none), zero
	// when not set.
	SyncTimeout time.Duration
	// SyncWaveDelay is controller.sync.wave.delay.seconds
	// (Options.Sync.WaveDelay), nil when not set.
	SyncWaveDelay *time.Duration
	// KubectlParallelism is controller.kubectl.parallelism.limit
	// (Options.ClusterWriteLimit); negative for a value below 1 (no
	// limit), zero when not set.
	KubectlParallelism int
	// JQTimeout is controller.ignore.normalizer.jq.timeout
	// (Options.JQTimeout).
	JQTimeout time.Duration
	// Client are the controller.k8s.* and controller.k8sclient.* keys: the
	// settings of every Kubernetes client (Options.QPS and Burst, and
	// RESTConfig).
	Client ClientParams
	// Log is controller.log.*, and LogTimestamp log.format.timestamp.
	Log          LogParams
	LogTimestamp string
	// Metrics are controller.metrics.*.
	Metrics MetricsParams
	// Profile is controller.profile.enabled.
	Profile bool
	// ShardingAlgorithm is controller.sharding.algorithm.
	ShardingAlgorithm string
	// RedisServer is redis.server (host:port): the Redis where a sharded
	// operator's replicas share rendered manifests.
	RedisServer string
	// ApplicationNamespaces is application.namespaces, comma-separated
	// names (a host that serves several namespaces reads it).
	ApplicationNamespaces []string
	// HydratorEnabled is hydrator.enabled: the host runs the source
	// hydrator (package hydrator) for apps with spec.sourceHydrator.
	HydratorEnabled bool
	// AppSets are the applicationsetcontroller.* keys.
	AppSets AppSetParams
	// Notifications are the notificationscontroller.* keys.
	Notifications NotificationParams
	// Ignored are the keys set that set nothing here (ParamKeys: meaningless
	// here, or another component's), and those of keys not implemented
	// whose value any is (Key.Same ""), sorted by key.
	Ignored []Ignored
	// Warnings say the same as Ignored, one line each (Key.Note).
	Warnings []string
}

// ClientParams are the settings of the Kubernetes clients.
type ClientParams struct {
	// QPS and Burst are controller.k8s.client.qps and .burst; zero when
	// not set.
	QPS   float32
	Burst int
	// MaxIdleConns is controller.k8s.client.max.idle.connections.
	MaxIdleConns int
	// DialTimeout, KeepAlive, TLSHandshakeTimeout and IdleConnTimeout are
	// controller.k8s.tcp.timeout, .tcp.keepalive, .tls.handshake.timeout
	// and .tcp.idle.timeout.
	DialTimeout, KeepAlive, TLSHandshakeTimeout, IdleConnTimeout time.Duration
	// RetryMax is controller.k8sclient.retry.max, and RetryBaseBackoff
	// controller.k8sclient.retry.base.backoff (default 100 ms).
	RetryMax         int
	RetryBaseBackoff time.Duration
}

// LogParams are a component's log settings.
type LogParams struct {
	// Level is debug, info, warn or error; "" when not set.
	Level string
	// Format is text or json; "" when not set.
	Format string
}

// MetricsParams are controller.metrics.*.
type MetricsParams struct {
	// AppLabels are the Application labels of argocd_app_labels.
	AppLabels []string
	// AppConditions are the condition types of argocd_app_condition.
	AppConditions []string
	// ClusterLabels are the cluster Secret labels of argocd_cluster_labels.
	ClusterLabels []string
}

// AppSetParams are the applicationsetcontroller.* keys this module
// applies.
type AppSetParams struct {
	// Policy is applicationsetcontroller.policy: "" or one of create-only,
	// create-update, create-delete, sync.
	Policy string
	// PolicyOverride is applicationsetcontroller.enable.policy.override,
	// nil when not set (then true when Policy is "", as in Argo CD).
	PolicyOverride *bool
	// ConcurrentReconciliations is
	// applicationsetcontroller.concurrent.reconciliations.max.
	ConcurrentReconciliations int
	// ProgressiveSyncs is applicationsetcontroller.enable.progressive.syncs.
	ProgressiveSyncs bool
	// Namespaces is applicationsetcontroller.namespaces (globs).
	Namespaces []string
	// RequeueAfter is applicationsetcontroller.requeue.after.
	RequeueAfter time.Duration
	// PreservedAnnotations and PreservedLabels are
	// applicationsetcontroller.global.preserved.*.
	PreservedAnnotations, PreservedLabels []string
	// SCMProviders is applicationsetcontroller.enable.scm.providers, nil
	// when not set (true).
	SCMProviders *bool
	// AllowedSCMProviders is applicationsetcontroller.allowed.scm.providers.
	AllowedSCMProviders []string
	// SCMRootCAPath is applicationsetcontroller.scm.root.ca.path.
	SCMRootCAPath string
	// TokenRefStrict is applicationsetcontroller.enable.tokenref.strict.mode.
	TokenRefStrict bool
	// DryRun is applicationsetcontroller.dryrun.
	DryRun bool
	// MaxStatusResources is applicationsetcontroller.status.max.resources.count.
	MaxStatusResources int
	// Debug is applicationsetcontroller.debug, and Log its log.level.
	Debug bool
	Log   LogParams
	// Queue are applicationsetcontroller.wq.*.
	Queue QueueParams
}

// QueueParams are a work queue's rate limiter (Argo CD's
// applicationsetcontroller.wq.*); zero fields were not set.
type QueueParams struct {
	// BucketSize is the token bucket's size
	// (applicationsetcontroller.wq.bucket.size).
	BucketSize int
	// BucketQPS is the bucket's refill rate, per second
	// (applicationsetcontroller.wq.bucket.qps).
	BucketQPS float64
	// BaseDelay is the first retry's delay
	// (applicationsetcontroller.wq.base.delay.ns).
	BaseDelay time.Duration
	// MaxDelay caps a retry's delay
	// (applicationsetcontroller.wq.max.delay.ns).
	MaxDelay time.Duration
	// BackoffFactor multiplies the delay after each failure
	// (applicationsetcontroller.wq.backoff.factor).
	BackoffFactor float64
}

// NotificationParams are the notificationscontroller.* keys this module
// applies.
type NotificationParams struct {
	// Log is notificationscontroller.log.level (its format is the
	// operator's one log's).
	Log LogParams
	// Processors is notificationscontroller.processors.count.
	Processors int
}

// ParseParams reads the data of an argocd-cmd-params-cm ConfigMap,
// the way ParsePartial reads argocd-cm: it returns the params of every
// key that parsed (never nil) and, joined, a *SettingError for each key
// whose value is malformed (ErrMalformed), asks for what this module does
// not do (a key not implemented set to another value than the one this
// module behaves as: ErrUnsupported), or is an unknown key of a component
// this module plays (ErrUnsupported). Keys that set nothing here are in
// Ignored and Warnings.
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
	backoff, err := selfHealBackoff(data)
	if err != nil {
		errs = append(errs, err)
	}
	p.SelfHealBackoff = backoff
	for _, ig := range p.Ignored {
		p.Warnings = append(p.Warnings, ig.Entry.Note(ParamsConfigMapName, ig.Key))
	}
	return p, errors.Join(errs...)
}

// playedPrefixes are the key prefixes of the components this module plays:
// an unknown key under one is refused, not ignored.
var playedPrefixes = []string{"controller.", "reposerver.", "applicationsetcontroller.", "notificationscontroller."}

// parseKey reads one key's value into p.
func (p *Params) parseKey(key, v string) error {
	entry, ok := LookupParam(key)
	if !ok {
		for _, prefix := range playedPrefixes {
			if strings.HasPrefix(key, prefix) {
				return fmt.Errorf("%w: unknown key", ErrUnsupported)
			}
		}
		// Not a key of a component this module plays, nor one Argo CD
		// documents: named, not refused.
		p.Ignored = append(p.Ignored, Ignored{Key: key, Entry: Key{Name: key, Use: UseMeaningless,
			Effect: "not a setting of the components this program plays"}})
		return nil
	}
	switch entry.Use {
	case UseMeaningless, UseOtherComponent:
		p.Ignored = append(p.Ignored, Ignored{Key: key, Entry: entry})
		return nil
	case UseNotImplemented:
		switch {
		case entry.Same == "":
			if v != "" {
				p.Ignored = append(p.Ignored, Ignored{Key: key, Entry: entry})
			}
			return nil
		case v == "" || v == entry.Same:
			return nil
		}
		return fmt.Errorf("%w: %q: %s", ErrUnsupported, v, entry.Effect)
	}
	parse, ok := paramParsers[key]
	if !ok {
		return nil // read with other keys (the self-heal backoff)
	}
	if v == "" {
		return nil // an empty value is the component's default
	}
	return parse(p, v)
}

// Apply puts the engine's params into opts: controller.status.processors
// into Options.ReconcileWorkers, controller.operation.processors into
// Options.SyncWorkers, controller.repo.server.timeout.seconds into
// Options.RenderTimeout, reposerver.parallelism.limit into
// Options.RenderParallelism (no limit: 1024, or ReconcileWorkers when
// larger), controller.diff.server.side into Options.ServerSideDiff,
// controller.sync.timeout.seconds into Options.Sync.Timeout,
// controller.sync.wave.delay.seconds into Options.Sync.WaveDelay,
// controller.kubectl.parallelism.limit into Options.ClusterWriteLimit,
// controller.k8s.client.qps and .burst into Options.QPS and Burst, and
// controller.ignore.normalizer.jq.timeout into Options.JQTimeout. Unset
// keys leave opts as it is.
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
	if p.SyncTimeout != 0 {
		opts.Sync.Timeout = p.SyncTimeout
	}
	if p.SyncWaveDelay != nil {
		opts.Sync.WaveDelay = *p.SyncWaveDelay
	}
	switch {
	case p.KubectlParallelism > 0:
		opts.ClusterWriteLimit = p.KubectlParallelism
	case p.KubectlParallelism < 0:
		opts.ClusterWriteLimit = 0
	}
	if p.Client.QPS > 0 {
		opts.QPS = p.Client.QPS
		if opts.Burst = p.Client.Burst; opts.Burst == 0 {
			opts.Burst = int(2 * p.Client.QPS) // Argo CD's default burst is twice the QPS
		}
	} else if p.Client.Burst > 0 {
		opts.Burst = p.Client.Burst
	}
	if p.JQTimeout > 0 {
		opts.JQTimeout = p.JQTimeout
	}
}

// ApplyTools puts reposerver.max.combined.directory.manifests.size into
// the built-in renderers' options (Settings.Tools): the bytes a directory
// render may read.
func (p *Params) ApplyTools(o *builtin.Options) {
	if p.DirectoryBytes > 0 {
		o.Plain.Limits.MaxTotalBytes = p.DirectoryBytes
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

// parseSeconds reads whole seconds, at least 0.
func parseSeconds(v string) (time.Duration, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %q, want whole seconds", ErrMalformed, v)
	}
	return time.Duration(n) * time.Second, nil
}

// parseNanoseconds reads a whole number of nanoseconds, at least 0.
func parseNanoseconds(v string) (time.Duration, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %q, want whole nanoseconds", ErrMalformed, v)
	}
	return time.Duration(n), nil
}

// parseQuantity reads a size as Argo CD's resource.Quantity does ("10M",
// "1G", "512Ki", or bytes).
func parseQuantity(v string) (int64, error) {
	units := []struct {
		suffix string
		n      int64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"k", 1000}, {"K", 1000}, {"M", 1000 * 1000}, {"G", 1000 * 1000 * 1000}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			n, err := strconv.ParseInt(num, 10, 64)
			if err != nil || n < 1 {
				break
			}
			return n * u.n, nil
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: %q, want a size such as 10M", ErrMalformed, v)
	}
	return n, nil
}

// parseLogLevel reads a log level as Argo CD's components take it.
func parseLogLevel(v string) (string, error) {
	switch l := strings.ToLower(v); l {
	case "debug", "info", "warn", "error":
		return l, nil
	case "warning":
		return "warn", nil
	}
	return "", fmt.Errorf("%w: %q, want debug, info, warn or error", ErrMalformed, v)
}

// parseLogFormat reads a log format.
func parseLogFormat(v string) (string, error) {
	switch f := strings.ToLower(v); f {
	case "text", "json":
		return f, nil
	}
	return "", fmt.Errorf("%w: %q, want text or json", ErrMalformed, v)
}

// splitList reads a comma-separated list, dropping empty items.
func splitList(v string) []string {
	var out []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
