// Package layers holds only tests of the boundaries around the engine
// (package engine, the lean core, and the root package
// github.com/kubegitops/gitops, its front door):
//
//   - the packages below the engine (the model, the vocabulary, the stores
//     and the machinery it is made of) never import it, so that a host
//     reading a status, sending notifications or keeping state does not pay
//     for the whole engine;
//   - neither the engine nor the root imports an add-on above it (argocd-cm
//     loading, the image updater over an engine, the ApplicationSet
//     controller), so that a host pays only for the add-ons it uses;
//   - package engine builds without the Helm, Kustomize and Jsonnet
//     renderers;
//   - the root's alias.go names exactly the engine's exported names.
package layers
