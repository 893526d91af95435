// Package store holds bytes under string keys for a limited time: the
// storage behind the render cache (and anything else that caches encoded
// values).
//
// Memory is a least-recently-used map bounded by a byte budget, not by an
// entry count, so that a few large rendered charts cannot hold the
// process's memory hostage; entries also expire after their TTL. Package
// redisstore keeps entries in a Redis server, so that replicas share
// rendered manifests; it lives apart so that a host that does not use it
// (and the engine, which takes any Store) does not build the Redis client.
// Tiered puts a near store (a Memory) in front of a far one (a Redis).
// Metrics are the series every store reports.
package store
