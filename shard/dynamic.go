package shard

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Argo CD's dynamic cluster distribution (ARGOCD_ENABLE_DYNAMIC_CLUSTER_DISTRIBUTION):
// the replicas of the application controller's Deployment claim their
// numbers in a ConfigMap.
const (
	// ShardConfigMapName is the ConfigMap of the shard claims.
	ShardConfigMapName = "argocd-app-controller-shard-cm"
	// ShardMappingKey is its key holding the claims, a JSON list of
	// ShardClaim.
	ShardMappingKey = "shardControllerMapping"
	// DefaultHeartbeat is how often a replica renews its claim when
	// $ARGOCD_CONTROLLER_HEARTBEAT_TIME is unset or outside 10 to 60
	// seconds, as in Argo CD.
	DefaultHeartbeat = 10 * time.Second
)

// ShardClaim is one entry of ShardMappingKey, field for field Argo CD's
// (its JSON keys are the Go field names, as Argo CD writes them).
type ShardClaim struct {
	// ShardNumber is the replica number claimed.
	ShardNumber int
	// ControllerName is the claiming replica's name (its Pod's host
	// name); empty while no replica holds the number.
	ControllerName string
	// HeartbeatTime is when the claim was last renewed.
	HeartbeatTime metav1.Time
}

// ClaimsOf reads the claims of a ShardConfigMapName ConfigMap (none when
// ShardMappingKey is absent or empty). A mapping that is not a JSON list of
// ShardClaim is an error naming the ConfigMap and key: Argo CD's
// controllers stop there too rather than overwrite it.
func ClaimsOf(cm *corev1.ConfigMap) ([]ShardClaim, error) {
	var claims []ShardClaim
	if v := cm.Data[ShardMappingKey]; v != "" {
		if err := json.Unmarshal([]byte(v), &claims); err != nil {
			return nil, fmt.Errorf("ConfigMap %s/%s key %s: %w", cm.Namespace, cm.Name, ShardMappingKey, err)
		}
	}
	return claims, nil
}

// HeartbeatFromEnv is the heartbeat period of the value of
// $ARGOCD_CONTROLLER_HEARTBEAT_TIME (seconds), as Argo CD reads it: a
// whole number from 10 to 60, else DefaultHeartbeat. A claim is stale
// three heartbeats after its last renewal.
func HeartbeatFromEnv(v string) time.Duration {
	n, err := strconv.ParseInt(v, 10, 0)
	if err != nil || n < 10 || n > 60 {
		return DefaultHeartbeat
	}
	return time.Duration(n) * time.Second
}

// ClaimResult is the answer of ClaimShard.
type ClaimResult struct {
	// Shard is the number this replica holds, -1 when it holds none.
	Shard int
	// Claims is the mapping to write back.
	Claims []ShardClaim
	// HeldBy names the replica that holds the number this replica asked
	// for (requested) with a fresh heartbeat; this replica then holds
	// none and Claims leave that replica's entry as it was.
	HeldBy string
}

// ClaimShard is one heartbeat of replica name over the claims, as Argo
// CD's application controller does it, with one difference (HeldBy). The
// rules:
//   - fewer claims than replicas: entries for the missing numbers are
//     added, empty; more claims than replicas (the Deployment scaled
//     down): every claim is dropped and the replicas claim again;
//   - requested (ARGOCD_CONTROLLER_SHARD) from 0 to replicas-1: that
//     number is claimed. Argo CD takes it even from another live replica,
//     so both act on one shard; here a number whose claim is another
//     replica's and fresh is not taken: Shard is -1 and HeldBy names the
//     holder, which the caller reports;
//   - otherwise the number already claimed under name is renewed;
//   - otherwise the first number that is unclaimed, or whose heartbeat
//     is older than timeout (3 heartbeats in Argo CD), is taken;
//   - otherwise Shard is -1: every number is held.
func ClaimShard(claims []ShardClaim, name string, replicas, requested int, now time.Time, timeout time.Duration) ClaimResult {
	out := make([]ShardClaim, 0, max(replicas, 0))
	if len(claims) <= replicas {
		out = append(out, claims...)
	}
	for n := len(out); n < replicas; n++ {
		out = append(out, ShardClaim{ShardNumber: n})
	}
	stale := func(c ShardClaim) bool {
		return c.ControllerName == "" || now.After(c.HeartbeatTime.Add(timeout))
	}
	take := func(i int) ClaimResult {
		out[i].ControllerName, out[i].HeartbeatTime = name, metav1.NewTime(now)
		return ClaimResult{Shard: out[i].ShardNumber, Claims: out}
	}
	if requested >= 0 && requested < replicas {
		for i := range out {
			if out[i].ShardNumber != requested {
				continue
			}
			if out[i].ControllerName != name && !stale(out[i]) {
				return ClaimResult{Shard: -1, Claims: out, HeldBy: out[i].ControllerName}
			}
			return take(i)
		}
	}
	for i := range out {
		if out[i].ControllerName == name {
			return take(i)
		}
	}
	for i := range out {
		if stale(out[i]) {
			return take(i)
		}
	}
	return ClaimResult{Shard: -1, Claims: out}
}
