// Package livetest holds the health checks' tests against a real local
// cluster (testenv): objects judged exactly as an API server and its
// controllers report them, and health seen changing over time. It has no
// non-test code; it is a separate package so that the health package's
// unit tests do not wait for a cluster to start.
package livetest
