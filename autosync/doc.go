// Package autosync is Argo CD's automated-sync decision as one pure
// function: Decide looks at an app's sync policy, the refresh just made,
// the record of its last automated sync and the time, and says whether to
// sync now, whether that is a self-heal, how long a self-heal backoff has
// left, and which condition the decision puts on the app. It reads no
// clock, cluster or store, so the run loop (package gitops) and a host's
// own loop (the operator example) share it and a test needs no engine.
// Its rules are listed on Decide.
package autosync
