package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kubegitops/gitops/shard"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// controlLeaseName is the Lease the acting operator (or one member of a
// sharded group) holds in its namespace (examples/operator's
// ControlLease).
const controlLeaseName = "gitops-operator"

// applicationsResource is Argo CD's Application resource.
var applicationsResource = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}

// shardMember is one row of `gitopsctl shards`.
type shardMember struct {
	group, member, lease string
	heartbeat            time.Time // the Lease's last renewal (zero: never)
	live                 bool
	apps                 int
}

// runShards lists the replicas that share apps through package shard's
// Leases in --namespace: each member, its Lease, its last heartbeat,
// whether it is live or expired (an expired Lease keeps its last holder,
// which is shown as such) and how many Applications name it as their
// owner; then the holder of the control Lease, the numbers claimed in Argo
// CD's argocd-app-controller-shard-cm (dynamic cluster distribution), and
// the apps no member owns.
func runShards(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("shards", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf clusterFlags
	cf.register(fs)
	namespace := fs.String("namespace", "argocd", "namespace of the Leases (the operator's -namespace, the agent's --shard-namespace)")
	group := fs.String("group", "", "only this group of replicas (default: every group in the namespace)")
	replicas := fs.Int("replicas", 0, "the replica count of operators placed by cluster as Argo CD places them (its ARGOCD_CONTROLLER_REPLICAS); default: the live members when every one's name ends in a number, as a StatefulSet's do")
	heartbeat := fs.Int("heartbeat-time", 0, "the replicas' heartbeat in seconds, as their $ARGOCD_CONTROLLER_HEARTBEAT_TIME (10 to 60; default 10): a claim of argocd-app-controller-shard-cm is stale after three")
	algorithm := fs.String("sharding-algorithm", "", "Argo CD's placement of clusters (legacy, round-robin, consistent-hashing; default: argocd-cmd-params-cm controller.sharding.algorithm, else legacy)")
	if !parseFlags(fs, args) {
		return 2
	}
	cfg, err := cf.restConfig()
	if err != nil {
		return fail(stderr, "shards", err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fail(stderr, "shards", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fail(stderr, "shards", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	selector := shard.LabelGroup
	if *group != "" {
		selector += "=" + *group
	}
	leases, err := kube.CoordinationV1().Leases(*namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fail(stderr, "shards", fmt.Errorf("listing the Leases of namespace %s: %w", *namespace, err))
	}
	now := time.Now()
	members := shardMembers(leases.Items, now)
	apps, err := listApps(ctx, dyn, *namespace)
	if err != nil {
		return fail(stderr, "shards", err)
	}
	owners := appOwners(apps)
	byName := map[string]*shardMember{}
	for i := range members {
		byName[members[i].member] = &members[i]
	}
	unowned, stray := 0, map[string]int{}
	for owner, n := range owners {
		switch m, ok := byName[owner]; {
		case owner == "":
			unowned = n
		case ok:
			m.apps += n
		default:
			stray[owner] = n
		}
	}
	if len(members) == 0 {
		fmt.Fprintf(stdout, "no replica shares apps in namespace %s (no Lease labelled %s)\n", *namespace, selector)
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "GROUP\tMEMBER\tSTATE\tHEARTBEAT\tAPPS\tLEASE")
		for _, m := range members {
			state := "live"
			if !m.live {
				state = "expired"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", m.group, m.member, state, ago(m.heartbeat, now), m.apps, m.lease)
		}
		_ = tw.Flush()
	}
	if ctl, err := kube.CoordinationV1().Leases(*namespace).Get(ctx, controlLeaseName, metav1.GetOptions{}); err == nil {
		holder, live := leaseState(ctl, now)
		switch {
		case holder == "":
			fmt.Fprintf(stdout, "control Lease %s: free\n", controlLeaseName)
		case live:
			fmt.Fprintf(stdout, "control Lease %s: held by %s (renewed %s)\n", controlLeaseName, holder, ago(renewed(ctl), now))
		default:
			fmt.Fprintf(stdout, "control Lease %s: expired, last held by %s (renewed %s)\n", controlLeaseName, holder, ago(renewed(ctl), now))
		}
	} else if !apierrors.IsNotFound(err) {
		return fail(stderr, "shards", fmt.Errorf("reading Lease %s/%s: %w", *namespace, controlLeaseName, err))
	}
	if err := printShardClaims(ctx, kube, *namespace, shard.HeartbeatFromEnv(fmt.Sprint(*heartbeat)), now, stdout); err != nil {
		return fail(stderr, "shards", err)
	}
	if n := *replicas; n > 1 || replicasOf(members) > 1 {
		if n <= 1 {
			n = replicasOf(members)
		}
		if err := printClusterShards(ctx, kube, apps, *namespace, *algorithm, n, members, stdout); err != nil {
			return fail(stderr, "shards", err)
		}
	}
	total := 0
	for _, n := range owners {
		total += n
	}
	fmt.Fprintf(stdout, "applications: %d, without an owner annotation: %d\n", total, unowned)
	for _, owner := range sortedKeys(stray) {
		fmt.Fprintf(stdout, "  %d owned by %s, which holds no Lease of the group\n", stray[owner], owner)
	}
	return 0
}

// shardMembers are the holders of the group Leases, live first, then by
// group and name.
func shardMembers(leases []coordinationv1.Lease, now time.Time) []shardMember {
	var out []shardMember
	for i := range leases {
		l := &leases[i]
		holder, live := leaseState(l, now)
		if holder == "" {
			continue // released: nobody to show
		}
		out = append(out, shardMember{group: l.Labels[shard.LabelGroup], member: holder, lease: l.Name, heartbeat: renewed(l), live: live})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].live != out[j].live {
			return out[i].live
		}
		if out[i].group != out[j].group {
			return out[i].group < out[j].group
		}
		return out[i].member < out[j].member
	})
	return out
}

// leaseState is a Lease's holder and whether its hold is still valid.
func leaseState(l *coordinationv1.Lease, now time.Time) (holder string, live bool) {
	s := l.Spec
	if s.HolderIdentity == nil || *s.HolderIdentity == "" {
		return "", false
	}
	if s.RenewTime == nil || s.LeaseDurationSeconds == nil {
		return *s.HolderIdentity, false
	}
	return *s.HolderIdentity, !now.After(s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second))
}

func renewed(l *coordinationv1.Lease) time.Time {
	if l.Spec.RenewTime == nil {
		return time.Time{}
	}
	return l.Spec.RenewTime.Time
}

// ago is how long before now t was, to the second ("never" for zero).
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return now.Sub(t).Round(time.Second).String() + " ago"
}

// appOwners counts the Applications by their owner annotation ("" for
// none).
func appOwners(apps []unstructured.Unstructured) map[string]int {
	out := map[string]int{}
	for _, app := range apps {
		out[app.GetAnnotations()[shard.AnnotationOwner]]++
	}
	return out
}

// isNoCRD reports an error of a cluster that does not serve Applications
// (the agent's apps live in files).
func isNoCRD(err error) bool {
	return strings.Contains(err.Error(), "the server could not find the requested resource")
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
