// Package recipes holds the code of docs/recipes.md: small, compiled and
// tested ways to replace one step of the engine with your own.
//
//   - Envsubst (renderer.go) is a render.Renderer for a new kind of source,
//     plain YAML with ${VAR} placeholders, chosen by the Application's
//     spec.source.plugin.name and registered through Options.Renderers.
//   - NewHealthChecker (health.go) adds a Go check for one custom resource
//     and a Lua script for another in front of the built-in checks, set as
//     Options.Health.
//   - DiskStore (store.go) is a cache/store.Store on the local disk, with a
//     TTL per entry, set as Options.RenderStore so that rendered manifests
//     survive a restart.
//   - Webhook (notify.go) posts each appstatus.Notification as JSON to an HTTP
//     endpoint, with a timeout, without ever blocking the engine and
//     without retries, set as Options.Notify.
//
// The tests exercise each recipe for real: the renderer and the store
// through Engine.Render on a local API server (testenv), the health checks
// on fixture objects, the webhook against an httptest server. A test also
// checks that every code block of docs/recipes.md is copied verbatim from
// these files.
package recipes
