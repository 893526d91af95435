package argocdcm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kubegitops/gitops/autosync"
)

// paramParsers read the keys ParamKeys says are applied.
var paramParsers = map[string]func(p *Params, v string) error{
	"application.namespaces": func(p *Params, v string) error {
		var patterns []string
		for _, ns := range splitList(v) {
			if ns != "*" && strings.ContainsAny(ns, "*?[]{}!/") {
				patterns = append(patterns, ns)
				continue
			}
			p.ApplicationNamespaces = append(p.ApplicationNamespaces, ns)
		}
		if len(patterns) > 0 {
			return fmt.Errorf("%w: %s: only names and * are served (the names apply)", ErrUnsupported, strings.Join(patterns, ", "))
		}
		return nil
	},
	"log.format.timestamp": func(p *Params, v string) error { p.LogTimestamp = v; return nil },
	"controller.status.processors": func(p *Params, v string) (err error) {
		p.StatusProcessors, err = parsePositive(v)
		return err
	},
	"controller.operation.processors": func(p *Params, v string) (err error) {
		p.OperationProcessors, err = parsePositive(v)
		return err
	},
	"controller.repo.server.timeout.seconds": func(p *Params, v string) error {
		n, err := parsePositive(v)
		p.RepoServerTimeout = time.Duration(n) * time.Second
		return err
	},
	"controller.log.format": func(p *Params, v string) (err error) { p.Log.Format, err = parseLogFormat(v); return err },
	"hydrator.enabled":      func(p *Params, v string) (err error) { p.HydratorEnabled, err = parseBool(v); return err },
	"controller.log.level":  func(p *Params, v string) (err error) { p.Log.Level, err = parseLogLevel(v); return err },
	"controller.metrics.application.labels": func(p *Params, v string) error {
		p.Metrics.AppLabels = splitList(v)
		return nil
	},
	"controller.metrics.application.conditions": func(p *Params, v string) error {
		p.Metrics.AppConditions = splitList(v)
		return nil
	},
	"controller.metrics.cluster.labels": func(p *Params, v string) error { p.Metrics.ClusterLabels = splitList(v); return nil },
	"controller.self.heal.timeout.seconds": func(p *Params, v string) error {
		n, err := parseSeconds(v)
		p.SelfHealTimeout = n
		return err
	},
	"controller.repo.error.grace.period.seconds": func(p *Params, v string) (err error) {
		p.RepoErrorGracePeriod, err = parseSeconds(v)
		return err
	},
	"controller.sync.timeout.seconds": func(p *Params, v string) error {
		n, err := parseSeconds(v)
		if p.SyncTimeout = n; err == nil && n == 0 {
			p.SyncTimeout = -1
		}
		return err
	},
	"controller.sync.wave.delay.seconds": func(p *Params, v string) error {
		n, err := parseSeconds(v)
		p.SyncWaveDelay = &n
		return err
	},
	"redis.server": func(p *Params, v string) error {
		p.RedisServer = strings.TrimSpace(v)
		return nil
	},
	"controller.sharding.algorithm": func(p *Params, v string) error {
		switch v {
		case "legacy", "round-robin", "consistent-hashing":
			p.ShardingAlgorithm = v
			return nil
		}
		return fmt.Errorf("%w: %q, want legacy, round-robin or consistent-hashing", ErrMalformed, v)
	},
	"controller.kubectl.parallelism.limit": func(p *Params, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%w: %q, want a whole number", ErrMalformed, v)
		}
		if p.KubectlParallelism = n; n < 1 {
			p.KubectlParallelism = -1
		}
		return nil
	},
	"controller.k8sclient.retry.max": func(p *Params, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: %q, want a whole number", ErrMalformed, v)
		}
		p.Client.RetryMax = n
		return nil
	},
	"controller.k8sclient.retry.base.backoff": func(p *Params, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: %q, want milliseconds", ErrMalformed, v)
		}
		p.Client.RetryBaseBackoff = time.Duration(n) * time.Millisecond
		return nil
	},
	"controller.diff.server.side": func(p *Params, v string) error {
		b, err := parseBool(v)
		p.ServerSideDiff = &b
		return err
	},
	"controller.profile.enabled": func(p *Params, v string) (err error) { p.Profile, err = parseBool(v); return err },
	"controller.k8s.client.qps": func(p *Params, v string) error {
		f, err := strconv.ParseFloat(v, 32)
		if err != nil || f <= 0 {
			return fmt.Errorf("%w: %q, want a positive number", ErrMalformed, v)
		}
		p.Client.QPS = float32(f)
		return nil
	},
	"controller.k8s.client.burst": func(p *Params, v string) (err error) {
		p.Client.Burst, err = parsePositive(v)
		return err
	},
	"controller.k8s.client.max.idle.connections": func(p *Params, v string) (err error) {
		p.Client.MaxIdleConns, err = parsePositive(v)
		return err
	},
	"controller.k8s.tcp.timeout":   func(p *Params, v string) (err error) { p.Client.DialTimeout, err = parseDuration(v); return err },
	"controller.k8s.tcp.keepalive": func(p *Params, v string) (err error) { p.Client.KeepAlive, err = parseDuration(v); return err },
	"controller.k8s.tls.handshake.timeout": func(p *Params, v string) (err error) {
		p.Client.TLSHandshakeTimeout, err = parseDuration(v)
		return err
	},
	"controller.k8s.tcp.idle.timeout": func(p *Params, v string) (err error) { p.Client.IdleConnTimeout, err = parseDuration(v); return err },
	"controller.ignore.normalizer.jq.timeout": func(p *Params, v string) (err error) {
		p.JQTimeout, err = parseDuration(v)
		return err
	},
	"reposerver.parallelism.limit": func(p *Params, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%w: %q, want a whole number", ErrMalformed, v)
		}
		if p.RenderParallelism = n; n < 1 {
			p.RenderParallelism = -1 // below 1: no limit
		}
		return nil
	},
	"reposerver.max.combined.directory.manifests.size": func(p *Params, v string) (err error) {
		p.DirectoryBytes, err = parseQuantity(v)
		return err
	},
	"applicationsetcontroller.policy": func(p *Params, v string) error {
		switch v {
		case "create-only", "create-update", "create-delete", "sync":
			p.AppSets.Policy = v
			return nil
		}
		return fmt.Errorf("%w: %q, want create-only, create-update, create-delete or sync", ErrMalformed, v)
	},
	"applicationsetcontroller.enable.policy.override": func(p *Params, v string) error {
		b, err := parseBool(v)
		p.AppSets.PolicyOverride = &b
		return err
	},
	"applicationsetcontroller.concurrent.reconciliations.max": func(p *Params, v string) (err error) {
		p.AppSets.ConcurrentReconciliations, err = parsePositive(v)
		return err
	},
	"applicationsetcontroller.debug": func(p *Params, v string) (err error) { p.AppSets.Debug, err = parseBool(v); return err },
	"applicationsetcontroller.log.level": func(p *Params, v string) (err error) {
		p.AppSets.Log.Level, err = parseLogLevel(v)
		return err
	},
	"applicationsetcontroller.dryrun": func(p *Params, v string) (err error) { p.AppSets.DryRun, err = parseBool(v); return err },
	"applicationsetcontroller.enable.progressive.syncs": func(p *Params, v string) (err error) {
		p.AppSets.ProgressiveSyncs, err = parseBool(v)
		return err
	},
	"applicationsetcontroller.namespaces": func(p *Params, v string) error { p.AppSets.Namespaces = splitList(v); return nil },
	"applicationsetcontroller.scm.root.ca.path": func(p *Params, v string) error {
		p.AppSets.SCMRootCAPath = v
		return nil
	},
	"applicationsetcontroller.allowed.scm.providers": func(p *Params, v string) error {
		p.AppSets.AllowedSCMProviders = splitList(v)
		return nil
	},
	"applicationsetcontroller.enable.scm.providers": func(p *Params, v string) error {
		b, err := parseBool(v)
		p.AppSets.SCMProviders = &b
		return err
	},
	"applicationsetcontroller.requeue.after": func(p *Params, v string) error {
		d, err := parseDuration(v)
		if err == nil && d < time.Second {
			return fmt.Errorf("%w: %q, want at least 1s", ErrMalformed, v)
		}
		p.AppSets.RequeueAfter = d
		return err
	},
	"applicationsetcontroller.enable.tokenref.strict.mode": func(p *Params, v string) (err error) {
		p.AppSets.TokenRefStrict, err = parseBool(v)
		return err
	},
	"applicationsetcontroller.global.preserved.annotations": func(p *Params, v string) error {
		p.AppSets.PreservedAnnotations = splitList(v)
		return nil
	},
	"applicationsetcontroller.global.preserved.labels": func(p *Params, v string) error {
		p.AppSets.PreservedLabels = splitList(v)
		return nil
	},
	"applicationsetcontroller.status.max.resources.count": func(p *Params, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: %q, want a whole number", ErrMalformed, v)
		}
		p.AppSets.MaxStatusResources = n
		return nil
	},
	"applicationsetcontroller.wq.bucket.size": func(p *Params, v string) (err error) {
		p.AppSets.Queue.BucketSize, err = parsePositive(v)
		return err
	},
	"applicationsetcontroller.wq.bucket.qps": func(p *Params, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 1 {
			return fmt.Errorf("%w: %q, want a number of at least 1", ErrMalformed, v)
		}
		p.AppSets.Queue.BucketQPS = f
		return nil
	},
	"applicationsetcontroller.wq.basedelay.ns": func(p *Params, v string) (err error) {
		p.AppSets.Queue.BaseDelay, err = parseNanoseconds(v)
		return err
	},
	"applicationsetcontroller.wq.maxdelay.ns": func(p *Params, v string) (err error) {
		p.AppSets.Queue.MaxDelay, err = parseNanoseconds(v)
		return err
	},
	"applicationsetcontroller.wq.backoff.factor": func(p *Params, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 1 {
			return fmt.Errorf("%w: %q, want a number of at least 1", ErrMalformed, v)
		}
		p.AppSets.Queue.BackoffFactor = f
		return nil
	},
	"notificationscontroller.log.level": func(p *Params, v string) (err error) {
		p.Notifications.Log.Level, err = parseLogLevel(v)
		return err
	},
	"notificationscontroller.processors.count": func(p *Params, v string) (err error) {
		p.Notifications.Processors, err = parsePositive(v)
		return err
	},
}

// selfHealBackoff reads controller.self.heal.backoff.* and
// controller.self.heal.timeout.seconds as Argo CD does: the backoff, with
// Argo CD's defaults for the keys not set, unless its timeout is 0, which
// makes controller.self.heal.timeout.seconds a fixed wait.
func selfHealBackoff(data map[string]string) (*autosync.Backoff, error) {
	b := autosync.DefaultBackoff()
	var errs []error
	seconds := func(key string, into *time.Duration) {
		v := strings.TrimSpace(data[key])
		if v == "" {
			return
		}
		d, err := parseSeconds(v)
		if err != nil {
			errs = append(errs, &SettingError{ConfigMap: ParamsConfigMapName, Key: key, Err: err})
			return
		}
		*into = d
	}
	seconds("controller.self.heal.backoff.timeout.seconds", &b.Duration)
	seconds("controller.self.heal.backoff.cap.seconds", &b.Cap)
	seconds("controller.self.heal.backoff.cooldown.seconds", &b.Cooldown)
	if v := strings.TrimSpace(data["controller.self.heal.backoff.factor"]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errs = append(errs, &SettingError{ConfigMap: ParamsConfigMapName, Key: "controller.self.heal.backoff.factor",
				Err: fmt.Errorf("%w: %q, want a whole number", ErrMalformed, v)})
		} else {
			b.Factor = float64(n)
		}
	}
	if b.Duration == 0 {
		var fixed time.Duration
		seconds("controller.self.heal.timeout.seconds", &fixed)
		b = autosync.FixedBackoff(fixed)
	}
	return &b, errors.Join(errs...)
}
