package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kubegitops/gitops/argocdcm"
	"github.com/kubegitops/gitops/examples/operator/controller"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// flags are the operator's command line.
type flags struct {
	kubeconfig string
	namespace  string
	interval   time.Duration
	workers    int
	// treeWriteDelay is controller.Options.TreeWriteDelay.
	treeWriteDelay time.Duration
	installCRD     bool
	metrics        string
	probes         string
	leaderElect    bool
	instanceID     string
	verbosity      int
	// appSets serves ApplicationSets (package appsets) beside Applications.
	appSets bool
	// appSetWebhook is the address of the ApplicationSet webhook (Argo
	// CD's :7000 /api/webhook); "0" or empty turns it off.
	appSetWebhook string
	// stateNamespace, when set, keeps each app's operation checkpoints
	// and engine history in ConfigMaps there, so that a restarted
	// operator resumes a sync it was killed in.
	stateNamespace string
	// appNamespaces are the other namespaces whose Applications are
	// served; ["*"] for every namespace.
	appNamespaces []string
	// set holds the flags given on the command line, which win over
	// argocd-cm and argocd-cmd-params-cm.
	set map[string]bool
	// params are argocd-cmd-params-cm as the operator started with it:
	// the settings of the components it plays that apply at start
	// (applicationsetcontroller.*, notificationscontroller.*).
	params *argocdcm.Params
	// notifications delivers Argo CD notifications (notifications.go).
	notifications bool
	// imageUpdateInterval is how often Applications with Argo CD Image
	// Updater annotations are checked (imageupdates.go); 0 turns it off.
	imageUpdateInterval time.Duration
	// hydratorInterval is how often Applications with spec.sourceHydrator
	// are hydrated, while argocd-cmd-params-cm hydrator.enabled is "true"
	// (hydrations.go); 0 turns it off.
	hydratorInterval time.Duration
	// sopsCommand, sopsKeyFiles and sopsKeySecret decrypt SOPS files
	// (sops.go).
	sopsCommand   string
	sopsKeyFiles  []string
	sopsKeySecret string
	// shard shares the Applications with the other operators of
	// shardGroup in -namespace (shards.go); shardID names this one.
	shard      bool
	shardGroup string
	shardID    string
	// replicas, shardingAlgorithm and controllerShard are Argo CD's
	// placement by cluster (placement.go): the replica count, the
	// algorithm and this replica's number (-1: from its name).
	replicas          int
	shardingAlgorithm string
	controllerShard   int
	// dynamic is Argo CD's dynamic cluster distribution
	// (placement_dynamic.go): the replica count from the controller
	// Deployment, the number claimed in argocd-app-controller-shard-cm.
	dynamic bool
	// redisAddr keeps rendered manifests in Redis, shared by replicas.
	redisAddr string
}

func parseFlags(args []string) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster config, then $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&f.namespace, "namespace", "argocd", "namespace whose Applications are reconciled")
	fs.DurationVar(&f.interval, "interval", 3*time.Minute, "refresh interval of each Application (default: argocd-cm timeout.reconciliation, whose 0 turns periodic refreshes off; else 3m)")
	fs.DurationVar(&f.treeWriteDelay, "tree-write-delay", controller.DefaultTreeWriteDelay, "how long after an Application's last status write a change of its resource tree alone waits, to be written with the next change or at the end of the wait (negative: at once)")
	fs.IntVar(&f.workers, "workers", 20, "Applications reconciled at once (default: Argo CD's controller.status.processors default; argocd-cmd-params-cm sets it when the flag is not given)")
	fs.BoolVar(&f.installCRD, "install-crd", true, "create or update the applications.argoproj.io, applicationsets.argoproj.io and appprojects.argoproj.io CRDs at start")
	fs.BoolVar(&f.appSets, "applicationsets", true, "serve ApplicationSets in the namespaces whose Applications are served, writing the Applications they generate")
	fs.StringVar(&f.appSetWebhook, "applicationset-webhook-bind-address", "0", "address of the ApplicationSet webhook (/api/webhook: pull request events refresh pullRequest generators at once, pushes git generators), verified with argocd-secret's webhook.* keys (0 turns it off)")
	fs.BoolVar(&f.notifications, "notifications", true, "deliver Argo CD notifications configured by argocd-notifications-cm and argocd-notifications-secret in -namespace, while that ConfigMap exists (reloaded when they change)")
	fs.StringVar(&f.metrics, "metrics-bind-address", ":8080", "address of the metrics endpoint (0 turns it off)")
	fs.StringVar(&f.probes, "health-probe-bind-address", ":8081", "address of /healthz and /readyz (0 turns them off)")
	fs.BoolVar(&f.leaderElect, "leader-elect", false, "stand by quietly while another operator holds the Lease "+LeaseName+" in -namespace (every operator takes that Lease before it writes; without this flag a waiting operator says so in its log and an Event)")
	fs.BoolVar(&f.shard, "shard", false, "share the Applications with the other operators started with -shard in -namespace (Leases of -shard-group), each acting on its share (default: on when $"+EnvReplicas+" is above 1)")
	fs.StringVar(&f.shardGroup, "shard-group", "gitops-operator", "the name of the group of sharded operators")
	fs.StringVar(&f.shardID, "id", "", "this operator's name in its Leases and the owner annotation (default: $POD_NAME, else the host name in a Pod, else the host name and a random suffix)")
	fs.IntVar(&f.replicas, "replicas", envInt(EnvReplicas, 0), "the number of replicas placed by cluster as Argo CD places them (default: $"+EnvReplicas+"); above 1 the operator runs sharded and places each cluster's apps on one replica by -sharding-algorithm")
	fs.StringVar(&f.shardingAlgorithm, "sharding-algorithm", os.Getenv(EnvShardingAlgorithm), "Argo CD's placement of clusters over -replicas: legacy, round-robin or consistent-hashing (default: $"+EnvShardingAlgorithm+", else argocd-cmd-params-cm controller.sharding.algorithm, else legacy)")
	fs.IntVar(&f.controllerShard, "controller-shard", envInt(EnvShard, -1), "this replica's number among -replicas (default: $"+EnvShard+", else the number that ends -id, as a StatefulSet Pod's name argocd-application-controller-2 is 2)")
	fs.BoolVar(&f.dynamic, "dynamic-cluster-distribution-enabled", envBool(EnvDynamicDistribution), "Argo CD's dynamic cluster distribution: the replica count is the spec.replicas of the Deployment $"+EnvControllerName+" (default "+DefaultControllerName+"), each replica claims its number in the ConfigMap argocd-app-controller-shard-cm and renews it every $"+EnvHeartbeatTime+" seconds (default: $"+EnvDynamicDistribution+"); turns on -shard")
	fs.StringVar(&f.redisAddr, "redis-addr", "", "sharded, keep rendered manifests in this Redis (host:port), shared by the replicas (default: argocd-cmd-params-cm redis.server; in memory when neither is set)")
	fs.StringVar(&f.instanceID, "instance-id", "", "instance id written on managed objects, so that two operators never prune each other's")
	fs.IntVar(&f.verbosity, "v", 0, "log verbosity: the log shows V(n) lines up to n; given, it wins over argocd-cmd-params-cm's log levels")
	fs.StringVar(&f.stateNamespace, "state-namespace", "", "namespace of the ConfigMaps holding sync checkpoints, so a restarted operator resumes an interrupted sync (empty: kept in memory, lost on restart)")
	fs.DurationVar(&f.imageUpdateInterval, "image-update-interval", 2*time.Minute, "how often Applications with argocd-image-updater.argoproj.io/image-list are checked for new images and written back (Argo CD Image Updater's --interval; 0 turns it off)")
	fs.DurationVar(&f.hydratorInterval, "hydrator-interval", 3*time.Minute, "how often Applications with spec.sourceHydrator are hydrated (their dry source rendered and committed), while argocd-cmd-params-cm hydrator.enabled is \"true\" (0 turns it off)")
	fs.StringVar(&f.sopsCommand, "sops", "", "decrypt SOPS-encrypted files with this gitops-sops program (go install github.com/kubegitops/gitops/sops/cmd/gitops-sops); default gitops-sops from PATH when a -sops-age-key flag is given")
	fs.Func("sops-age-key-file", "age identity file (keys.txt) that opens SOPS files; repeatable", func(v string) error {
		f.sopsKeyFiles = append(f.sopsKeyFiles, v)
		return nil
	})
	fs.StringVar(&f.sopsKeySecret, "sops-age-key-secret", "", "Secret of -namespace whose keys.txt and *.agekey entries are age identities that open SOPS files (read at start)")
	appNamespaces := fs.String("application-namespaces", "", "other namespaces whose Applications are reconciled, comma-separated, or * for every namespace (Argo CD's application.namespaces; other patterns are refused); their Applications need a project whose sourceNamespaces allow them")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	for _, ns := range strings.Split(*appNamespaces, ",") {
		ns = strings.TrimSpace(ns)
		switch {
		case ns == "":
		case ns != "*" && strings.ContainsAny(ns, "*?[]{}!"):
			return f, fmt.Errorf("-application-namespaces: %q: only names and * are supported", ns)
		default:
			f.appNamespaces = append(f.appNamespaces, ns)
		}
	}
	if f.namespace == "" {
		return f, errors.New("-namespace is required")
	}
	return f, nil
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		if cfg, err := rest.InClusterConfig(); err == nil {
			return cfg, nil
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
}
