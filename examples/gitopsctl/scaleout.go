package main

import (
	"flag"
	"fmt"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/cache/store/redisstore"
	"github.com/kubegitops/gitops/shard"
	"github.com/redis/go-redis/v9"
	"k8s.io/client-go/rest"
)

// scaleOutFlags run the agent as one of several replicas: apps shared out
// through Leases, rendered manifests shared through Redis.
type scaleOutFlags struct {
	shardNamespace string
	shardGroup     string
	shardID        string
	redisAddr      string
}

func (s *scaleOutFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.shardNamespace, "shard-namespace", "", "share the apps with other replicas through Leases in this namespace; off when empty")
	fs.StringVar(&s.shardGroup, "shard-group", "gitops", "the name of the group of replicas")
	fs.StringVar(&s.shardID, "shard-id", "", "this replica's name in the group (default: host name and a random suffix)")
	fs.StringVar(&s.redisAddr, "redis-addr", "", "keep rendered manifests in this Redis (host:port), shared by the replicas; in memory when empty")
}

// apply sets the sharder and the render store; the returned function
// releases what it opened.
func (s *scaleOutFlags) apply(cfg *rest.Config, opts *gitops.Options) (closeFn func(), err error) {
	closeFn = func() {}
	if s.shardNamespace != "" {
		so := shard.DefaultOptions()
		so.Namespace, so.Group, so.Identity, so.Log = s.shardNamespace, s.shardGroup, s.shardID, opts.Log
		m, err := shard.New(cfg, so)
		if err != nil {
			return closeFn, err
		}
		opts.Sharder = m // Run holds the Lease for its lifetime
	}
	if s.redisAddr != "" {
		client := redis.NewClient(&redis.Options{Addr: s.redisAddr})
		opts.RenderStore = redisstore.New(client, redisstore.DefaultOptions())
		closeFn = func() { _ = client.Close() }
	}
	return closeFn, nil
}

// describe says how the agent shares its work, for its first line.
func (s *scaleOutFlags) describe(opts gitops.Options) string {
	out := ""
	if m, ok := opts.Sharder.(*shard.Membership); ok {
		out += fmt.Sprintf(" as replica %s of group %s (namespace %s)", m.Identity(), s.shardGroup, s.shardNamespace)
	}
	if s.redisAddr != "" {
		out += ", renders shared through Redis at " + s.redisAddr
	}
	return out
}
