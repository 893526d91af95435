// Package layers holds only tests of the boundaries around the engine (the
// root package, github.com/kubegitops/gitops): the packages below it must
// never import it, so that a host reading a status, sending notifications
// or keeping state does not pay for the whole engine; and the engine must
// never import the add-ons above it (argocd-cm loading, the image updater
// over an engine, the ApplicationSet runner), so that a host pays only for
// the add-ons it uses.
package layers
