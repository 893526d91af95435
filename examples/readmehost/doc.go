// Package readmehost holds two host programs written by a new user of the
// library from README.md and go doc alone, without reading the library's
// sources, tests or other examples (issue 44): cistep, a CI pipeline step
// that renders an Application and diffs it against a cluster (or prints its
// manifests without one), and watch, a tiny controller that runs an engine
// over a folder of Application files and prints each status change and
// notification. FRICTION.md, at the root of the branch that added them,
// lists where the documentation fell short while writing them.
package readmehost
