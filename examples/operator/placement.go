package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	gosync "sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/internal/clustersecret"
	"github.com/kubegitops/gitops/shard"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Argo CD's application controller variables of its placement by cluster.
const (
	// EnvShardingAlgorithm is controller.sharding.algorithm as Argo CD's
	// manifests pass it from argocd-cmd-params-cm.
	EnvShardingAlgorithm = "ARGOCD_CONTROLLER_SHARDING_ALGORITHM"
	// EnvShard is the replica's number, when its Pod name does not carry it.
	EnvShard = "ARGOCD_CONTROLLER_SHARD"
	// EnvDynamicDistribution turns on Argo CD's dynamic cluster
	// distribution (a Deployment whose replicas share clusters through the
	// ConfigMap argocd-app-controller-shard-cm); see dynamicShard.
	EnvDynamicDistribution = "ARGOCD_ENABLE_DYNAMIC_CLUSTER_DISTRIBUTION"
)

// envInt is the integer in the variable name, or def when it is unset or
// not an integer.
func envInt(name string, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(os.Getenv(name)))
	if err != nil {
		return def
	}
	return n
}

// envBool is the boolean in the variable name (strconv.ParseBool), or
// false when it is unset or not a boolean, as Argo CD reads its switches.
func envBool(name string) bool {
	b, err := strconv.ParseBool(os.Getenv(name))
	return err == nil && b
}

// placementGrace is how long a replica placed by cluster waits before it
// acts on an app it gains, so that the replica losing it, which sees the
// same change at about the same time, has let it go.
const placementGrace = 2 * time.Second

// byCluster is the operator's Sharder when it places apps as Argo CD's
// application controller does (-replicas above 1): each destination
// cluster goes to one replica by shard.ClusterShards, and every app goes
// with its destination. An app whose destination names no known cluster
// is replica 0's, which reports it. Apps are owned only while the gate (the
// control Lease watch) lets the group act, and an app gained is acted on
// after placementGrace.
type byCluster struct {
	reader           client.Reader
	cache            cache.Cache
	namespace        string
	algorithm        string
	replicas, self   int
	inClusterEnabled func() bool
	gate             *controlWatch
	// dynamic, when set, gives the replica count and this replica's
	// number (Argo CD's dynamic cluster distribution) instead of replicas
	// and self.
	dynamic *dynamicShard
	// claims, when set, finds another live member with this replica's
	// number (placement_duplicates.go); while one was there first, this
	// replica owns nothing.
	claims *replicaClaims
	log    logr.Logger
	notify chan struct{}

	mu gosync.Mutex
	// since is when each app was first seen as this replica's.
	since map[string]time.Time
	// placed is the cluster (by name) to replica map last computed.
	placed map[string]int
}

// byClusterSettings returns the algorithm, the replica count and this
// replica's number when the operator places apps as Argo CD does, and ok
// false when it uses its own per-app placement. It logs the choice. With
// dynamic distribution (-dynamic-cluster-distribution-enabled) the count
// and number come from dynamicShard instead and are returned as 0 and -1.
// A number above the count is 0, a number equal to it owns no cluster, as
// in Argo CD's controller; warn (log and Event) says so.
func byClusterSettings(f flags, cmAlgorithm, identity string, log logr.Logger, warn func(reason, msg string)) (algorithm string, replicas, self int, ok bool) {
	algorithm = f.shardingAlgorithm
	if algorithm == "" {
		algorithm = cmAlgorithm
	}
	if f.replicas < 2 && !f.dynamic {
		if algorithm != "" && f.sharded() {
			log.Info("controller.sharding.algorithm needs $"+EnvReplicas+" (-replicas) above 1: the group places apps one by one over its Leases instead", "algorithm", algorithm)
		}
		return "", 0, 0, false
	}
	switch algorithm {
	case shard.AlgorithmLegacy, shard.AlgorithmRoundRobin, shard.AlgorithmConsistentHashing:
	case "":
		algorithm = shard.AlgorithmLegacy
	default:
		log.Info("unknown sharding algorithm, using legacy as Argo CD does", "algorithm", algorithm)
		algorithm = shard.AlgorithmLegacy
	}
	if f.dynamic {
		return algorithm, 0, -1, true
	}
	self = f.controllerShard
	if self < 0 {
		n, named := shard.ShardFromName(identity)
		if !named {
			log.Info("this replica's name ends in no number and $"+EnvShard+" is not set: it is replica 0, as in Argo CD", "member", identity)
		}
		self = n
	}
	switch {
	case self > f.replicas:
		warn(ReasonReplicaOutOfRange, fmt.Sprintf("replica %s: its number %d is above the replica count %d ($%s): it acts as replica 0, as Argo CD's controller does", identity, self, f.replicas, EnvReplicas))
		self = 0
	case self == f.replicas:
		warn(ReasonReplicaOutOfRange, fmt.Sprintf("replica %s: its number %d is not below the replica count %d ($%s): it owns no cluster, as in Argo CD's controller", identity, self, f.replicas, EnvReplicas))
	}
	return algorithm, f.replicas, self, true
}

// Start follows the gate and the changes that move clusters (cluster
// Secrets, Applications' destinations) until ctx ends.
func (p *byCluster) Start(ctx context.Context) error {
	poke := p.poke
	secrets, err := p.cache.GetInformer(ctx, &corev1.Secret{})
	if err != nil {
		return fmt.Errorf("placement: %w", err)
	}
	isCluster := func(o any) bool {
		s, ok := o.(*corev1.Secret)
		return ok && s.Namespace == p.namespace && clustersecret.IsClusterSecret(s.Labels)
	}
	r1, err := secrets.AddEventHandler(toolscache.FilteringResourceEventHandler{FilterFunc: isCluster, Handler: toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { poke() }, UpdateFunc: func(any, any) { poke() }, DeleteFunc: func(any) { poke() },
	}})
	if err != nil {
		return fmt.Errorf("placement: %w", err)
	}
	defer func() { _ = secrets.RemoveEventHandler(r1) }()
	apps, err := p.cache.GetInformer(ctx, &v1alpha1.Application{})
	if err != nil {
		return fmt.Errorf("placement: %w", err)
	}
	r2, err := apps.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(o, n any) {
		a, aok := o.(*v1alpha1.Application)
		b, bok := n.(*v1alpha1.Application)
		if aok && bok && a.Spec.Destination != b.Spec.Destination {
			poke()
		}
	}})
	if err != nil {
		return fmt.Errorf("placement: %w", err)
	}
	defer func() { _ = apps.RemoveEventHandler(r2) }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.gate.Changes():
			poke()
		}
	}
}

// poke says that Owned may answer differently.
func (p *byCluster) poke() {
	select {
	case p.notify <- struct{}{}:
	default:
	}
}

// NeedLeaderElection is false: every replica follows its placement.
func (p *byCluster) NeedLeaderElection() bool { return false }

// Changes receives a value whenever Owned may answer differently
// (gitops.Sharder).
func (p *byCluster) Changes() <-chan struct{} { return p.notify }

// Owned returns, of all ("namespace/name"), the apps whose destination
// cluster is this replica's (gitops.Sharder), once their grace has passed.
func (p *byCluster) Owned(all []string) map[string]bool {
	owned := map[string]bool{}
	if !p.gate.acting() || (p.claims != nil && !p.claims.clear()) {
		return owned
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var secrets corev1.SecretList
	var apps v1alpha1.ApplicationList
	if err := p.reader.List(ctx, &secrets, client.InNamespace(p.namespace), client.MatchingLabels{engine.ClusterSecretTypeLabel: "cluster"}); err != nil {
		p.log.Error(err, "placement: cannot list the cluster Secrets")
		return owned
	}
	if err := p.reader.List(ctx, &apps); err != nil {
		p.log.Error(err, "placement: cannot list the Applications")
		return owned
	}
	clusters, servers := shard.ClustersFromSecrets(secrets.Items, p.inClusterEnabled == nil || p.inClusterEnabled())
	byServer := map[string]int64{}
	dest := make(map[string]v1alpha1.ApplicationDestination, len(apps.Items))
	for i := range apps.Items {
		a := &apps.Items[i]
		byServer[a.Spec.Destination.Server]++
		dest[client.ObjectKeyFromObject(a).String()] = a.Spec.Destination
	}
	replicas, self := p.numbers()
	placed := shard.ClusterShards(p.algorithm, clusters, byServer, replicas)
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recordPlacement(placed, servers, replicas, self)
	since := make(map[string]time.Time, len(all))
	wait := time.Duration(0)
	for _, k := range all {
		d := dest[k]
		server := d.Server
		if server == "" {
			server = servers[d.Name]
		}
		if self < 0 || placed[server] != self { // unknown destinations are 0's
			continue
		}
		t, seen := p.since[k]
		if !seen {
			t = now
		}
		since[k] = t
		if left := placementGrace - now.Sub(t); left > 0 {
			wait = max(wait, left)
			continue
		}
		owned[k] = true
	}
	p.since = since
	if wait > 0 {
		time.AfterFunc(wait, func() {
			select {
			case p.notify <- struct{}{}:
			default:
			}
		})
	}
	return owned
}

// numbers returns the replica count and this replica's number (-1: it
// holds none).
func (p *byCluster) numbers() (replicas, self int) {
	if p.dynamic != nil {
		return p.dynamic.current()
	}
	return p.replicas, p.self
}

// recordPlacement keeps the placement by cluster name and logs the
// clusters whose replica changed. p.mu is held.
func (p *byCluster) recordPlacement(placed map[string]int, servers map[string]string, replicas, self int) {
	byName := make(map[string]int, len(placed))
	for name, server := range servers {
		if n, ok := placed[server]; ok {
			byName[name] = n
		}
	}
	var moved []string
	for name, n := range byName {
		if was, ok := p.placed[name]; !ok || was != n {
			moved = append(moved, fmt.Sprintf("%s=%d", name, n))
		}
	}
	if len(moved) > 0 {
		sort.Strings(moved)
		p.log.Info("clusters placed", "algorithm", p.algorithm, "replicas", replicas, "replica", self, "clusters", strings.Join(moved, ","))
	}
	p.placed = byName
}

// Placement returns the replica of each cluster (by name) last computed.
func (p *byCluster) Placement() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.placed))
	for k, v := range p.placed {
		out[k] = v
	}
	return out
}
