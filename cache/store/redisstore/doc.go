// Package redisstore is a store.Store in a Redis server
// (github.com/redis/go-redis/v9), so that replicas share rendered
// manifests: a host sets it as engine.Options.RenderStore, alone or
// behind a memory store (store.Tiered).
//
// Every call has a timeout, whatever the client's own timeouts and
// retries. A Redis that is down or slow turns a Get into a miss and a Set
// into a no-op: each returns its error for the caller to log and counts it
// in gitops_store_errors_total, but a cache must never fail the work it
// speeds up. After a failure the store stops asking the server for a
// while (Options.Cooldown), so a dead Redis costs one timeout per cooldown.
//
// It lives apart from package store so that the engine, which takes any
// store.Store, does not build the Redis client.
package redisstore
