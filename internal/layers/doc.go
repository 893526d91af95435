// Package layers holds only a test: the boundary between the engine (the
// root package, github.com/kubegitops/gitops) and the packages below it,
// which must never import it, so that a host reading a status, sending
// notifications or keeping state does not pay for the whole engine.
package layers
