// Package argocdcm turns Argo CD's settings ConfigMaps into engine options,
// as Argo CD's util/settings reads them for its controller and repo server.
// It sits above the engine (package gitops) and uses only its exported API;
// the engine never imports it, so a host that configures the engine in Go
// does not pay for it.
//
// Two ConfigMaps are read:
//   - argocd-cm (ConfigMapName): Parse, ParsePartial, Read (from a
//     namespace of a cluster) and LoadFile (from a YAML file) give Settings:
//     health and action customisations, ignoreDifferences,
//     ignoreResourceUpdates, knownTypeFields, resource exclusions and
//     inclusions (also limited to clusters), compare options, timeouts,
//     respectRBAC, tracking method and instance label key.
//     Settings.Apply puts them into a gitops.Options.
//   - argocd-cmd-params-cm (ParamsConfigMapName): ParseParams gives Params
//     (processors, the repo server timeout, render parallelism, server-side
//     diff, the self-heal timeout, application namespaces); Params.Apply puts
//     them into a gitops.Options.
//
// A key whose value is malformed, or which asks for what the engine does
// not do, is a *SettingError naming the ConfigMap and key (wrapping
// ErrMalformed or ErrUnsupported); keys of Argo CD's other components are
// listed in Warnings. Parse refuses the whole ConfigMap on one bad key;
// ParsePartial and ParseParams keep the keys that parsed, for a host that
// keeps running on bad input.
//
// Defaults returns gitops.DefaultOptions changed where this library's
// defaults differ from Argo CD's: the starting point of a host that wants
// to behave as Argo CD does.
package argocdcm
