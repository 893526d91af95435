// Package redistest runs a real redis-server (Debian's, installed by make
// test) on a free loopback port for the length of one test, so that the
// packages that store things in Redis test against the real server; fault
// tests kill it, start it again on its port, and freeze it.
package redistest
