// Package actions runs resource actions with Argo CD's contract: day-2
// operations such as restarting a Deployment, scaling it, suspending a
// CronJob or promoting an Argo Rollout, each written as a Lua script.
//
// A kind's actions are a discovery script and one script per action, as in
// Argo CD's resource_customizations/<group>/<Kind>/actions folder:
//
//   - discovery.lua sees the object as the global obj and returns a table
//     keyed by action name, each value a table with the optional fields
//     disabled, iconClass, displayName and params (a list of tables with
//     name, type and default);
//   - <name>/action.lua sees obj and the global actionParams (the caller's
//     parameters, name to string value) and returns either the changed
//     object, or (the newer form) a list of {operation = "create" | "patch",
//     resource = object}, where "patch" may only name the object the action
//     ran on.
//
// Scripts run in the health package's sandbox (health/internal/luavm) with
// the same limits; the os library (time, date, clock, difftime) is there
// and also reachable as require("os"), which Argo CD's action scripts use.
//
// A Runner never touches a cluster: Run validates the script's result
// (same identity for a patch, no system field changed, a complete object
// for a create) and returns it with the merge patch that applies it, so
// the caller (the root package's Engine.RunAction) can check it against
// the app's project before applying anything. Any failure is a typed error
// and yields no result.
//
// Built-in actions ship in the package (BuiltinScripts) and are tested in
// Argo CD's action_test.yaml format by RunTests, which also runs a
// checkout of Argo CD's own resource_customizations.
package actions
