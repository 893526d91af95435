// Package e2e holds the end-to-end test of the SOPS decryptor: an engine
// on the local test cluster syncing an app with an encrypted Secret. It
// has its own package so that the decryptor's unit tests do not wait for
// a cluster.
package e2e
