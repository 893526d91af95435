// Package enginetest holds the notify package's tests against a real
// engine on a real local cluster (testenv): an application that the engine
// syncs sends Argo CD's on-sync-succeeded notification to a webhook on
// loopback, with the configuration read from the cluster. It has no code
// of its own; keeping these tests here lets the notify package's unit
// tests run without a cluster.
package enginetest
