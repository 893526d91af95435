// Package layers holds only a test: the boundary between the engine (the
// root package, github.com/kubegitops/gitops) and the packages below it,
// which must never import it, so that a host reading a status, sending
// notifications or keeping state does not pay for the whole engine; and
// the boundary between the engine and the add-ons above it (the
// ApplicationSet controller, appset/controller), which it must never
// import, so that a host pays only for the add-ons it wires.
package layers
