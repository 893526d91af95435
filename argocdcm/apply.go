package argocdcm

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/health/actions"
	"github.com/kubegitops/gitops/render/builtin"
	"github.com/kubegitops/gitops/resource"
)

// Apply puts the settings into opts: health overrides into a new
// health checker (Options.Health) that also runs the Lua overrides of the
// host's *health.DefaultChecker, if it set one (argocd-cm's win on a kind
// both give: health.WithOverrides), actions into a new actions.Runner
// (Options.Actions), ignore rules into Options.IgnoreDifferences,
// ignoreAggregatedRoles into Options.IgnoreAggregatedRoles,
// exclusions (added to the cache's default exclusions) and inclusions into
// Options.Cache.Filter, the reconciliation timeout and jitter into
// Options.Interval and Jitter, resource.respectRBAC into
// Options.Cache.RespectRBAC (strict: access reviews; normal: found by
// trying), annotation tracking into Options.Tracking (Argo CD's
// argocd.argoproj.io/tracking-id), the ignoreResourceUpdates rules into
// Options.IgnoreResourceUpdates (added to the host's, without repeats: a
// loaded argocd-cm turns update ignoring on, as Argo CD 3 does; its
// resource.ignoreResourceUpdatesEnabled: false turns it off),
// timeout.hard.reconciliation into Options.HardInterval, installationID
// into Options.Tracking.InstanceID, application.sync.impersonation.* into
// Options.Impersonation, and the renderers' options (kustomize.buildOptions,
// helm.valuesFileSchemes, Argo CD's defaults for the rest: Tools) into
// Options.Toolkit, as builtin.ToolsWith; those three only from Settings
// Parse or ParsePartial made. It refuses to replace Actions the host set
// itself, or to add health scripts to a Health that is not a
// *health.DefaultChecker.
func (s *Settings) Apply(opts *engine.Options) error {
	if len(s.KnownTypeFields) > 0 {
		if _, err := diff.New(diff.Options{KnownTypeFields: s.KnownTypeFields}); err != nil {
			return fmt.Errorf("argocd-cm: %w", err)
		}
		opts.KnownTypeFields = append(opts.KnownTypeFields, s.KnownTypeFields...)
	}
	if len(s.HealthOverrides) > 0 {
		c, err := health.WithOverrides(opts.Health, s.HealthOverrides)
		if err != nil {
			return fmt.Errorf("argocd-cm: health overrides: %w", err)
		}
		opts.Health = c
	}
	if len(s.Actions) > 0 {
		if opts.Actions != nil {
			return fmt.Errorf("argocd-cm: actions given, but Options.Actions is already set")
		}
		aopts := actions.DefaultOptions()
		aopts.Overrides = s.Actions
		r, err := actions.New(aopts)
		if err != nil {
			return fmt.Errorf("actions: %w", err)
		}
		opts.Actions = r
	}
	opts.IgnoreDifferences = append(opts.IgnoreDifferences, s.IgnoreDifferences...)
	if s.IgnoreAggregatedRoles {
		opts.IgnoreAggregatedRoles = true
	}
	if len(s.Exclusions) > 0 {
		if len(opts.Cache.Filter.Exclude) == 0 {
			opts.Cache.Filter.Exclude = cache.DefaultExclusions()
		}
		opts.Cache.Filter.Exclude = append(opts.Cache.Filter.Exclude, s.Exclusions...)
	}
	if len(s.Inclusions) > 0 {
		opts.Cache.Filter.Include = append(opts.Cache.Filter.Include, s.Inclusions...)
	}
	if s.Reconciliation != 0 {
		opts.Interval = s.Reconciliation
	}
	if s.Jitter != 0 {
		opts.Jitter = s.Jitter
	}
	switch s.RespectRBAC {
	case "strict":
		opts.Cache.RespectRBAC = true
	case "normal":
		opts.Cache.RespectRBAC = false
	}
	if s.TrackingMethod != "" {
		// Argo CD's settings mean Argo CD's keys.
		instance := opts.Tracking.InstanceID
		opts.Tracking = resource.TrackingArgoCD()
		opts.Tracking.Method = resource.TrackingMethod(s.TrackingMethod)
		opts.Tracking.InstanceID = instance
	}
	switch s.IgnoreResourceStatusField {
	case "crd":
		opts.CompareStatus, opts.IgnoreStatus = engine.CompareStatusAll, []schema.GroupKind{{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}}
	case "none", "off":
		opts.CompareStatus, opts.IgnoreStatus = engine.CompareStatusAll, nil
	}
	if s.InstanceLabelKey != "" {
		opts.Tracking.LabelKey = s.InstanceLabelKey
	}
	if s.IgnoreResourceUpdates == nil {
		opts.IgnoreResourceUpdates = nil // resource.ignoreResourceUpdatesEnabled: false
	} else {
		rules := slices.Clip(opts.IgnoreResourceUpdates)
		if rules == nil {
			rules = []engine.ResourceIgnoreDifferences{}
		}
		for _, r := range s.IgnoreResourceUpdates {
			if !slices.ContainsFunc(rules, func(x engine.ResourceIgnoreDifferences) bool { return reflect.DeepEqual(x, r) }) {
				rules = append(rules, r)
			}
		}
		opts.IgnoreResourceUpdates = rules
	}
	if s.HardReconciliation > 0 {
		opts.HardInterval = s.HardReconciliation
	}
	if s.InstallationID != "" {
		opts.Tracking.InstanceID = s.InstallationID
	}
	if s.Tools != nil {
		opts.Impersonation = s.Impersonation
		opts.Toolkit = builtin.ToolsWith(*s.Tools)
	}
	return nil
}

// Read reads argocd-cm from namespace on the cluster of cfg
// and parses it with Parse.
func Read(ctx context.Context, cfg *rest.Config, namespace string) (*Settings, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cm, err := cs.CoreV1().ConfigMaps(namespace).Get(ctx, ConfigMapName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", namespace, ConfigMapName, err)
	}
	return Parse(cm.Data)
}

// LoadFile reads an argocd-cm ConfigMap from a YAML file and
// parses it with Parse.
func LoadFile(path string) (*Settings, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := resource.Decode(path, raw, resource.DefaultDecodeOptions())
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 || objs[0].GetKind() != "ConfigMap" {
		return nil, fmt.Errorf("%s: want one ConfigMap", path)
	}
	data := map[string]string{}
	raw2, _ := objs[0].Object["data"].(map[string]any)
	for k, v := range raw2 {
		sv, ok := v.(string)
		if !ok {
			return nil, &SettingError{Key: k, Err: fmt.Errorf("%w: not a string", ErrMalformed)}
		}
		data[k] = sv
	}
	return Parse(data)
}
