// Package shard spreads applications over replicas of an engine.
//
// A fleet too large for one process runs several replicas. Each replica
// holds a Kubernetes Lease of its own in a shared namespace (renewed and
// released by client-go's leaderelection) and reads the Leases of its
// group: the holders of unexpired Leases are the live members. Apps go to
// members by consistent hashing with bounded loads (Assign), which every
// replica computes alone from the same inputs, so they agree without
// talking; a member leaving moves only its own apps, and no member takes
// more than LoadFactor times its fair share.
//
// Ownership changes safely: a replica lets go of apps it loses as soon as
// it sees the change and takes apps it gains only after a grace of two
// read periods, by which time their previous owners have let them go. A
// replica stopped cleanly releases its Lease and its apps move within a
// read period plus the grace; a crashed one's apps move once its Lease
// expires. What the fencing cannot stop is an operation already running
// on the old owner (a sync in flight finishes there).
//
// A team that wants Argo CD's placement instead places whole clusters:
// ClusterShards answers, for each destination cluster, the replica that
// Argo CD's application controller gives it under
// controller.sharding.algorithm (legacy, round-robin or
// consistent-hashing, the last as ConsistentHashingShards), honouring a
// cluster Secret's shard field; every app of a cluster goes to that
// replica. ShardFromName reads a replica's number from its StatefulSet
// Pod name, as Argo CD does.
//
// Membership implements the engine's Sharder (gitops.Options.Sharder):
//
//	m, _ := shard.New(cfg, shard.Options{Namespace: "gitops"})
//	opts.Sharder = m // Engine.Run runs m for its lifetime
//
// Replicas share rendered manifests by giving every engine the same
// Redis store (cache/store/redisstore.New as engine.Options.RenderStore), so an app
// taken over is not rendered again.
package shard
