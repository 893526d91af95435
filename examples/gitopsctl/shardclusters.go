package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/kubegitops/gitops/shard"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// replicasOf is the replica count of a group placed by cluster as Argo
// CD's StatefulSet runs it: the live members whose names end in a number
// (argocd-application-controller-0, -1, ...), when every live member's
// does; else 0.
func replicasOf(members []shardMember) int {
	n := 0
	for _, m := range members {
		if !m.live {
			continue
		}
		if _, ok := shard.ShardFromName(m.member); !ok {
			return 0
		}
		n++
	}
	return n
}

// printClusterShards prints, for a group placed by cluster over replicas,
// each cluster of namespace with its replica (by Argo CD's algorithm: the
// given one, else argocd-cmd-params-cm controller.sharding.algorithm,
// else legacy), the live member of that number and the apps whose
// destination it is: Argo CD's `argocd admin cluster shards`.
func printClusterShards(ctx context.Context, kube kubernetes.Interface, apps []unstructured.Unstructured, namespace, algorithm string, replicas int, members []shardMember, stdout io.Writer) error {
	if algorithm == "" {
		cm, err := kube.CoreV1().ConfigMaps(namespace).Get(ctx, "argocd-cmd-params-cm", metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading ConfigMap %s/argocd-cmd-params-cm: %w", namespace, err)
		}
		if err == nil {
			algorithm = cm.Data["controller.sharding.algorithm"]
		}
	}
	if algorithm == "" {
		algorithm = shard.AlgorithmLegacy
	}
	secrets, err := kube.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{LabelSelector: "argocd.argoproj.io/secret-type=cluster"})
	if err != nil {
		return fmt.Errorf("listing the cluster Secrets of namespace %s: %w", namespace, err)
	}
	cm, err := kube.CoreV1().ConfigMaps(namespace).Get(ctx, "argocd-cm", metav1.GetOptions{})
	inCluster := err != nil || cm.Data["cluster.inClusterEnabled"] != "false"
	clusters, servers := shard.ClustersFromSecrets(secrets.Items, inCluster)
	byServer, appsOf := map[string]int64{}, map[string]int{}
	for _, a := range apps {
		server, _, _ := unstructured.NestedString(a.Object, "spec", "destination", "server")
		name, _, _ := unstructured.NestedString(a.Object, "spec", "destination", "name")
		byServer[server]++
		if server == "" {
			server = servers[name]
		}
		appsOf[server]++
	}
	placed := shard.ClusterShards(algorithm, clusters, byServer, replicas)
	memberOf := map[int]string{}
	for _, m := range members {
		if n, ok := shard.ShardFromName(m.member); ok && m.live {
			memberOf[n] = m.member
		}
	}
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Fprintf(stdout, "clusters placed by %s over %d replicas:\n", algorithm, replicas)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tSERVER\tREPLICA\tMEMBER\tAPPS")
	for _, name := range names {
		server := servers[name]
		n := placed[server]
		member := memberOf[n]
		if member == "" {
			member = "(none live)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", name, server, strconv.Itoa(n), member, appsOf[server])
	}
	return tw.Flush()
}

// listApps lists the Applications of every namespace when allowed, else
// of namespace; none without the CRD.
func listApps(ctx context.Context, dyn dynamic.Interface, namespace string) ([]unstructured.Unstructured, error) {
	list, err := dyn.Resource(applicationsResource).List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		list, err = dyn.Resource(applicationsResource).Namespace(namespace).List(ctx, metav1.ListOptions{})
	}
	if apierrors.IsNotFound(err) || (err != nil && isNoCRD(err)) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing Applications: %w", err)
	}
	return list.Items, nil
}
