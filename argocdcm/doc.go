// Package argocdcm turns Argo CD's settings ConfigMaps into engine options,
// as Argo CD's components read them. It sits above the engine (package
// gitops) and uses only its exported API; the engine never imports it, so
// a host that configures the engine in Go does not pay for it.
//
// Two tables are the one home of what each key does here: SettingKeys
// for argocd-cm and ParamKeys for argocd-cmd-params-cm. Each entry names
// the Argo CD components that read the key and its Use: applied (the
// Effect says what it sets, Live whether a running operator takes a
// change), meaningless here (a part of a component this module plays that
// it does not have: a repo server's gRPC endpoint and TLS, Redis caches,
// another component's profiling; the Effect says why), not implemented
// (behaviour this module lacks; a value other than the one it behaves as
// is refused by name), or another component's (the API server, the web
// UI, Dex, the commit server). Tests walk the docs' own argocd-cm.yaml and
// argocd-cmd-params-cm.yaml of Argo CD's release and fail on a key the
// tables miss.
//
// The ConfigMaps:
//   - argocd-cm (ConfigMapName): Parse, ParsePartial, Read (from a
//     namespace of a cluster) and LoadFile (from a YAML file) give Settings:
//     health and action customisations, ignoreDifferences,
//     ignoreResourceUpdates, knownTypeFields, resource exclusions and
//     inclusions (also limited to clusters), compare options, timeouts,
//     respectRBAC, tracking method, instance label key, installationID,
//     cluster.inClusterEnabled, impersonation, kustomize.buildOptions and
//     helm.valuesFileSchemes. Settings.Apply puts them into a
//     gitops.Options (Engine.Settings().Reconfigure takes them while it runs).
//   - argocd-cmd-params-cm (ParamsConfigMapName): ParseParams gives Params,
//     the keys of the application controller, repo server, ApplicationSet
//     controller and notifications controller: Params.Apply puts the
//     engine's into a gitops.Options (processors, render timeout and
//     parallelism, server-side diff, sync timeout and wave delay, the
//     cluster write limit, client QPS and burst, the jq timeout),
//     ClientParams.RESTConfig the Kubernetes clients' transport and retry
//     settings into a rest.Config, and a host (the operator) reads the
//     rest: the self-heal backoff, logs, metrics labels, the
//     ApplicationSet and notifications controllers' settings.
//
// A key whose value is malformed, or which asks for what this module does
// not do, is a *SettingError naming the ConfigMap and key (wrapping
// ErrMalformed or ErrUnsupported); keys that set nothing here are in
// Ignored (and Warnings, one line each; Summaries groups them by why).
// Parse refuses the whole ConfigMap on one bad key; ParsePartial and
// ParseParams keep the keys that parsed, for a host that keeps running on
// bad input.
//
// Defaults returns gitops.DefaultOptions changed where this library's
// defaults differ from Argo CD's: the starting point of a host that wants
// to behave as Argo CD does.
package argocdcm
