// Command portal is an internal deploy portal built on the gitops engine: a
// web UI and a small JSON API over one gitops.Engine, with no second source
// of truth. The engine's run loop owns status; the portal reads it
// (Engine.AppStatus, History, LastOperation, Render, ResourceTree,
// LiveObject: the tree and live objects from the engine's own cluster
// caches, a descendant's whole object from the API server), and acts
// through the engine (Refresh, Sync, Rollback, Terminate, RunAction).
//
//	go run ./examples/portal --apps DIR --token-file tokens.txt --policy policy.yaml
//
// Pages are html/template, rendered on the server, with one small vanilla
// script (web/app.js) for the resource panel, the sync dialog (reset to
// its defaults at each opening) and what server-sent events push: the live
// progress of a sync, the status badges, and the tree, history and last
// operation after each refresh or sync. Nothing is built with Node; the
// assets are embedded.
//
// Security: every request is authenticated (a bearer token from the token
// file, or a session cookie made by logging in with such a token or through
// an OIDC issuer); every API call is authorised against the app's project
// by the policy's roles (readonly or admin, mapped from groups); every POST
// carries the session's CSRF token; responses carry a strict
// Content-Security-Policy (no inline script or style); Secret values are
// masked unless a role grants secrets; each sync, rollback, terminate and
// resource action is written to the audit log with who asked and what, and
// so is each attempt refused (by a role, the policy, a CSRF check, a
// running operation, or the engine's project rules and sync windows), with
// the outcome "refused: <why>".
//
// --operator (Applications read from the cluster) is refused: this portal
// serves the apps of a folder only.
package main
