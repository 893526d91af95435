package argocdcm

import (
	"maps"
	"slices"
	"time"

	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/render/builtin"
	"github.com/kubegitops/gitops/resource"
)

// Defaults returns engine.DefaultOptions changed where this library's
// defaults differ from Argo CD's, so that an engine behaves as Argo CD does
// in one call:
//   - Sync.ApplyOutOfSyncOnly false: every object of the app is applied on
//     each sync, not only the ones that differ (Argo CD's
//     ApplyOutOfSyncOnly=false default; an app can still set it);
//   - Sync.WaitFinalWave false: a sync succeeds once its last wave is
//     written, without waiting for that wave to become healthy (earlier
//     waves are still waited for, as in Argo CD);
//   - Sync.PruneClusterScoped true: cluster-scoped objects removed from Git
//     are pruned like namespaced ones;
//   - Tracking: resource.TrackingArgoCD(), Argo CD's tracking-id and
//     installation-id annotations, so objects an Argo CD installation
//     manages are adopted as they are;
//   - IgnoreResourceUpdates: engine.DefaultIgnoreResourceUpdates (Argo CD 3's
//     resource.ignoreResourceUpdatesEnabled true): a watched change of
//     status and the other ignored fields alone refreshes no app;
//   - Sync.WaveDelay 2 s (controller.sync.wave.delay.seconds): a sync
//     waits between waves, once a wave is healthy, so that other
//     controllers see its changes first;
//   - Impersonation off (application.sync.impersonation.enabled false):
//     an AppProject's destinationServiceAccounts are not impersonated
//     until argocd-cm turns impersonation on;
//   - Toolkit: the built-in renderers with ArgoCDTools' options (Helm
//     value files may be fetched over http and https).
//
// Everything else keeps engine.DefaultOptions' values, which match Argo CD's.
func Defaults() engine.Options {
	o := engine.DefaultOptions()
	o.Sync.ApplyOutOfSyncOnly = false
	o.Sync.WaitFinalWave = false
	o.Sync.PruneClusterScoped = true
	o.Tracking = resource.TrackingArgoCD()
	o.IgnoreResourceUpdates = defaultIgnoreResourceUpdates()
	o.Sync.WaveDelay = 2 * time.Second
	o.Impersonation = engine.ImpersonationOff
	o.Toolkit = builtin.ToolsWith(ArgoCDTools())
	return o
}

// defaultIgnoreResourceUpdates is engine.DefaultIgnoreResourceUpdates as a
// list, sorted by key.
func defaultIgnoreResourceUpdates() []engine.ResourceIgnoreDifferences {
	m := engine.DefaultIgnoreResourceUpdates()
	out := make([]engine.ResourceIgnoreDifferences, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}
