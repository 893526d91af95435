// Package store holds bytes under string keys for a limited time: the
// storage behind the render cache (and anything else that caches encoded
// values).
//
// Two implementations share the Store interface:
//
//   - Memory is a least-recently-used map bounded by a byte budget, not by
//     an entry count, so that a few large rendered charts cannot hold the
//     process's memory hostage; entries also expire after their TTL.
//   - Redis keeps entries in a Redis server (github.com/redis/go-redis/v9),
//     so that replicas share rendered manifests. Every call has a timeout.
//     A Redis that is down or slow turns a Get into a miss and a Set into a
//     no-op: each returns its error for the caller to log and counts it in
//     gitops_store_errors_total, but a cache must never fail the work it
//     speeds up.
//
// Tiered puts a Memory in front of a Redis.
package store
