package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	gosync "sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops/shard"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// Argo CD's variables of its dynamic cluster distribution.
const (
	// EnvHeartbeatTime is the heartbeat period in seconds (10 to 60,
	// default 10) of a replica's claim in argocd-app-controller-shard-cm.
	EnvHeartbeatTime = "ARGOCD_CONTROLLER_HEARTBEAT_TIME"
	// EnvControllerName names the application controller's Deployment,
	// whose spec.replicas is the replica count.
	EnvControllerName = "ARGOCD_APPLICATION_CONTROLLER_NAME"
	// DefaultControllerName is that Deployment's name when
	// EnvControllerName is unset.
	DefaultControllerName = "argocd-application-controller"
)

// Event reasons of Argo CD's placement by cluster.
const (
	// ReasonShardClaimConflict is the Warning Event, on the ConfigMap
	// argocd-app-controller-shard-cm, of a replica that asked for a number
	// ($ARGOCD_CONTROLLER_SHARD) another live replica holds: it does not
	// act; the message names both.
	ReasonShardClaimConflict = "ShardClaimConflict"
	// ReasonReplicaOutOfRange is the Warning Event of a replica whose
	// number is not below the replica count; the message says what it
	// does instead.
	ReasonReplicaOutOfRange = "ReplicaOutOfRange"
)

// claimRetries is how many times a conflicting write of the claims is
// retried within one heartbeat (Argo CD's
// AppControllerHeartbeatUpdateRetryCount); after that the next heartbeat
// tries again.
const claimRetries = 3

// dynamicShard is this replica's number under Argo CD's dynamic cluster
// distribution: the replica count is the controller Deployment's
// spec.replicas (re-read when it changes), and the number is claimed in
// the ConfigMap argocd-app-controller-shard-cm by shard.ClaimShard every
// heartbeat. Every write carries the resourceVersion read, so two
// replicas never overwrite each other's claims. A number whose claim
// went stale (3 heartbeats) is taken by a replica that holds none.
type dynamicShard struct {
	kube       kubernetes.Interface
	namespace  string
	deployment string
	self       string
	requested  int // $ARGOCD_CONTROLLER_SHARD, -1 when unset
	heartbeat  time.Duration
	recorder   record.EventRecorder
	log        logr.Logger
	// changed is called when the count or the number changes.
	changed func()

	mu       gosync.Mutex
	replicas int
	shard    int    // -1: none
	heldBy   string // the holder of the requested number last reported
	full     bool   // "every number is held" was said
}

// newDynamicShard reads the controller Deployment of namespace (named by
// $ARGOCD_APPLICATION_CONTROLLER_NAME) and returns the claim of replica
// self, not yet started; it fails, naming the Deployment, when that
// Deployment is missing or has no replica count, as Argo CD's controller
// does.
func newDynamicShard(ctx context.Context, kube kubernetes.Interface, namespace, self string, requested int, recorder record.EventRecorder, log logr.Logger) (*dynamicShard, error) {
	name := os.Getenv(EnvControllerName)
	if name == "" {
		name = DefaultControllerName
	}
	d := &dynamicShard{kube: kube, namespace: namespace, deployment: name, self: self, requested: requested,
		heartbeat: shard.HeartbeatFromEnv(os.Getenv(EnvHeartbeatTime)), recorder: recorder, log: log, shard: -1, changed: func() {}}
	n, err := d.readReplicas(ctx)
	if err != nil {
		return nil, err
	}
	d.replicas = n
	return d, nil
}

// readReplicas returns the Deployment's spec.replicas.
func (d *dynamicShard) readReplicas(ctx context.Context) (int, error) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	dep, err := d.kube.AppsV1().Deployments(d.namespace).Get(rctx, d.deployment, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("$%s: the controller Deployment %s/%s: %w", EnvDynamicDistribution, d.namespace, d.deployment, err)
	}
	return deploymentReplicas(dep)
}

// deploymentReplicas is the Deployment's spec.replicas, which must be set
// and above 0.
func deploymentReplicas(dep *appsv1.Deployment) (int, error) {
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas < 1 {
		return 0, fmt.Errorf("$%s: the controller Deployment %s/%s has no replicas (spec.replicas %v): it needs at least 1", EnvDynamicDistribution, dep.Namespace, dep.Name, dep.Spec.Replicas)
	}
	return int(*dep.Spec.Replicas), nil
}

// current returns the replica count and this replica's number (-1: it
// holds none and owns no cluster).
func (d *dynamicShard) current() (replicas, self int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.replicas, d.shard
}

// NeedLeaderElection is false: every replica claims its number.
func (d *dynamicShard) NeedLeaderElection() bool { return false }

// Start claims a number at once and then every heartbeat, and at once
// whenever the Deployment's replica count changes, until ctx ends.
func (d *dynamicShard) Start(ctx context.Context) error {
	beat := make(chan struct{}, 1)
	inf := toolscache.NewSharedInformer(toolscache.NewListWatchFromClient(d.kube.AppsV1().RESTClient(), "deployments", d.namespace,
		fields.OneTermEqualSelector("metadata.name", d.deployment)), &appsv1.Deployment{}, 0)
	onDeployment := func(o any) {
		dep, ok := o.(*appsv1.Deployment)
		if !ok {
			return
		}
		n, err := deploymentReplicas(dep)
		if err != nil {
			d.log.Error(err, "dynamic cluster distribution: the replica count is unchanged")
			return
		}
		d.mu.Lock()
		was := d.replicas
		d.replicas = n
		d.mu.Unlock()
		if was != n {
			d.log.Info("the controller Deployment's replica count changed: clusters are placed again", "deployment", d.namespace+"/"+d.deployment, "from", was, "to", n)
			d.changed()
			select {
			case beat <- struct{}{}:
			default:
			}
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: onDeployment, UpdateFunc: func(_, o any) { onDeployment(o) }}); err != nil {
		return fmt.Errorf("dynamic cluster distribution: %w", err)
	}
	var wg gosync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() { defer wg.Done(); inf.RunWithContext(ctx) }()
	t := time.NewTicker(d.heartbeat)
	defer t.Stop()
	for {
		d.claim(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-beat:
		}
	}
}

// claim is one heartbeat: it reads the claims, applies shard.ClaimShard
// and writes them back with the resourceVersion read, retrying a
// conflicting write claimRetries times.
func (d *dynamicShard) claim(ctx context.Context) {
	var err error
	for range claimRetries + 1 {
		if err = d.claimOnce(ctx); !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			break
		}
	}
	if err != nil && ctx.Err() == nil {
		d.log.Error(err, "cannot renew the claim in the ConfigMap: the next heartbeat tries again", "configmap", d.namespace+"/"+shard.ShardConfigMapName)
	}
}

func (d *dynamicShard) claimOnce(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, d.heartbeat)
	defer cancel()
	cms := d.kube.CoreV1().ConfigMaps(d.namespace)
	cm, err := cms.Get(rctx, shard.ShardConfigMapName, metav1.GetOptions{})
	create := apierrors.IsNotFound(err)
	switch {
	case create:
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: d.namespace, Name: shard.ShardConfigMapName}}
	case err != nil:
		return err
	}
	// A mapping that cannot be read is not overwritten, as in Argo CD.
	claims, err := shard.ClaimsOf(cm)
	if err != nil {
		return err
	}
	replicas, _ := d.current()
	r := shard.ClaimShard(claims, d.self, replicas, d.requested, time.Now(), 3*d.heartbeat)
	b, err := json.Marshal(r.Claims)
	if err != nil {
		return err
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[shard.ShardMappingKey] = string(b)
	if create {
		cm, err = cms.Create(rctx, cm, metav1.CreateOptions{})
	} else {
		cm, err = cms.Update(rctx, cm, metav1.UpdateOptions{}) // carries the resourceVersion read
	}
	if err != nil {
		return err
	}
	d.settle(cm, r, replicas)
	return nil
}

// settle records the number claimed and says what changed.
func (d *dynamicShard) settle(cm *corev1.ConfigMap, r shard.ClaimResult, replicas int) {
	d.mu.Lock()
	was := d.shard
	d.shard = r.Shard
	report := r.HeldBy != "" && r.HeldBy != d.heldBy
	d.heldBy = r.HeldBy
	full := r.Shard < 0 && r.HeldBy == "" && !d.full
	d.full = r.Shard < 0 && r.HeldBy == ""
	d.mu.Unlock()
	if report {
		msg := fmt.Sprintf("replica %s asks for shard %d ($%s), which replica %s holds with a fresh heartbeat: %s does not act until that claim goes stale (%s without a heartbeat)",
			d.self, d.requested, EnvShard, r.HeldBy, d.self, 3*d.heartbeat)
		d.log.Info(msg, "shard", d.requested, "holder", r.HeldBy, "replica", d.self)
		d.recorder.Event(cm, corev1.EventTypeWarning, ReasonShardClaimConflict, msg)
	}
	if full {
		d.log.Info("every shard is held by a live replica: this replica owns no cluster until one's claim goes stale or the Deployment scales up", "replicas", replicas, "replica", d.self)
	}
	if was != r.Shard {
		d.log.Info("shard claimed in the ConfigMap", "configmap", d.namespace+"/"+shard.ShardConfigMapName, "shard", r.Shard, "was", was, "replicas", replicas, "replica", d.self)
		d.changed()
	}
}
