// Package layers holds only tests of the boundaries around the engine
// (package engine, the lean core, and the root package
// github.com/kubegitops/gitops, its front door). Every package of the
// module is in one layer, listed in layers_test.go: below the engine (the
// model, the vocabulary, the stores, the machinery, and the batteries that
// implement the engine's seams), the engine, the root, the add-ons above
// it (argocdcm, appset, imageupdate, notify, preview), the hosts
// (examples/...) and test support. The tests check that
//
//   - every package is in a layer, and every import points down: nothing
//     below the engine imports it, the root or an add-on; neither the engine
//     nor the root imports an add-on; no package of the library imports a
//     host or test support (TestEveryPackageHasALayer,
//     TestBelowTheEngineNeverImportsIt, TestEngineNeverImportsAnAddon), so
//     that a host reading a status, keeping state or rendering does not pay
//     for the engine, and a host pays only for the add-ons it uses;
//   - package engine builds without the batteries the root or the host
//     plugs in: the renderers, the chart source, CEL policies, the Redis
//     store, kubeconfig loading, shards, the image updater's registry
//     client (TestLeanCoreBuildsWithoutTheBatteries);
//   - package engine builds at most 800 packages (TestLeanCoreWithinItsBudget),
//     and past that names the imports that brought the excess;
//   - the root's alias.go names exactly the engine's exported names;
//   - bench/ and sops/ select the library's versions of the modules both
//     compile.
//
// shard sits below the engine: it implements the engine's Sharder seam
// with Kubernetes Leases and imports nothing of the engine, and the host
// plugs it in (Options.Sharder), so it is a battery the lean core never
// imports, not an add-on over an engine.
package layers
