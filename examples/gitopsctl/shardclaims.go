package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/kubegitops/gitops/shard"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// printShardClaims prints the replica numbers claimed in Argo CD's
// argocd-app-controller-shard-cm (dynamic cluster distribution), when the
// namespace has it: each number, the replica holding it, its last
// heartbeat and whether the claim is fresh or stale (three heartbeats old,
// when another replica may take the number, as Argo CD's controllers do).
// Nothing is printed without the ConfigMap.
func printShardClaims(ctx context.Context, kube kubernetes.Interface, namespace string, heartbeat time.Duration, now time.Time, out io.Writer) error {
	cm, err := kube.CoreV1().ConfigMaps(namespace).Get(ctx, shard.ShardConfigMapName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading ConfigMap %s/%s: %w", namespace, shard.ShardConfigMapName, err)
	}
	claims, err := shard.ClaimsOf(cm)
	if err != nil {
		return err
	}
	sort.Slice(claims, func(i, j int) bool { return claims[i].ShardNumber < claims[j].ShardNumber })
	fmt.Fprintf(out, "dynamic cluster distribution (%s, stale after %s without a heartbeat):\n", shard.ShardConfigMapName, 3*heartbeat)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SHARD\tCONTROLLER\tHEARTBEAT\tCLAIM")
	for _, c := range claims {
		name, state := c.ControllerName, "fresh"
		switch {
		case name == "":
			name, state = "-", "free"
		case now.Sub(c.HeartbeatTime.Time) > 3*heartbeat:
			state = "stale"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", c.ShardNumber, name, ago(c.HeartbeatTime.Time, now), state)
	}
	return tw.Flush()
}
