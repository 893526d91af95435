package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	gosync "sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops/shard"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// ReasonNotActing is the Event reason (on the Lease LeaseName) of an
// operator that does not act because another holds the namespace.
const ReasonNotActing = "NotActing"

// EnvReplicas is Argo CD's controller StatefulSet variable; a value above
// 1 runs the operator sharded (-shard), since Argo CD's manifests set it
// when they run several controllers.
const EnvReplicas = "ARGOCD_CONTROLLER_REPLICAS"

// memberName is this operator's name in the Lease LeaseName and, sharded,
// in its group: -id, else $POD_NAME, else the host name in a Pod
// (which is the Pod's name), else the host name and a random suffix, so
// that two operators started by hand on one machine (or in one process)
// are two. A Pod keeps its name across restarts, so a restarted replica
// takes back its Lease at once.
func memberName(id string) string {
	if id != "" {
		return id
	}
	if p := os.Getenv("POD_NAME"); p != "" {
		return p
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "operator"
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return host
	}
	return host + "-" + string(uuid.NewUUID())[:8]
}

// sharded reports whether the apps are shared with other replicas: -shard,
// or, when -shard is not given, -replicas (ARGOCD_CONTROLLER_REPLICAS)
// above 1 or Argo CD's dynamic cluster distribution.
func (f flags) sharded() bool {
	if f.set["shard"] {
		return f.shard
	}
	return f.shard || f.replicas > 1 || f.dynamic
}

// everyReplica is the NeedLeaderElection of the controllers every
// replica of a sharded group runs (the cluster and repository Secrets
// that configure its engine): false when sharded, else the manager's
// default (only the elected operator runs them).
func (f flags) everyReplica() *bool {
	if f.sharded() {
		return new(bool)
	}
	return nil
}

// leaseLock is the Lease LeaseName of namespace as identity holds it.
func leaseLock(kube kubernetes.Interface, namespace, identity string) resourcelock.Interface {
	return &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: LeaseName, Namespace: namespace},
		Client:     kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
}

// onEveryReplica is a manager runnable that runs on every replica of a
// sharded group, not only on the one holding the Lease.
type onEveryReplica func(ctx context.Context) error

// Start runs the function.
func (f onEveryReplica) Start(ctx context.Context) error { return f(ctx) }

// NeedLeaderElection is false.
func (onEveryReplica) NeedLeaderElection() bool { return false }

// leaseHolder returns the holder of a Lease that has not expired ("" when
// none holds it).
func leaseHolder(l *coordinationv1.Lease, now time.Time) string {
	s := l.Spec
	if s.HolderIdentity == nil || s.RenewTime == nil || s.LeaseDurationSeconds == nil {
		return ""
	}
	if now.After(s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second)) {
		return ""
	}
	return *s.HolderIdentity
}

// controlWatch reads the Lease LeaseName. An operator that does not hold
// it and is not of the holder's sharded group says once per holder, in
// its log and a Warning Event on the Lease, that it does not act (unless
// quiet: -leader-elect, unsharded). Unsharded, it reads while holdLease
// waits; sharded, it waits at start for a namespace no operator outside
// the group holds (waitForGroup), then runs with the manager as the
// operator's Sharder: Owned is the Membership's answer while the Lease is
// held by a member of the group, and nothing otherwise, so a sharded
// replica and an unsharded operator never act together.
type controlWatch struct {
	kube      kubernetes.Interface
	namespace string
	self      string
	period    time.Duration
	log       logr.Logger
	recorder  record.EventRecorder
	// quiet keeps the wait out of the log and Events.
	quiet bool
	// members is the sharded group (nil: not sharded).
	members *shard.Membership

	mu      gosync.Mutex
	holder  string // the Lease's holder last read
	warned  string // the holder last reported
	groupOK bool   // the holder is a member of the group
	notify  chan struct{}
}

// newControlWatch returns the watch of the Lease of namespace, for the
// operator self, and a function that stops its Event recorder.
func newControlWatch(kube kubernetes.Interface, namespace, self string, log logr.Logger) (*controlWatch, func(), error) {
	b := record.NewBroadcaster(record.WithContext(context.Background()))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	w := &controlWatch{kube: kube, namespace: namespace, self: self, period: 2 * time.Second, log: log, notify: make(chan struct{}, 1),
		recorder: b.NewRecorder(clientgoscheme.Scheme, corev1.EventSource{Component: "gitops-operator"})}
	return w, b.Shutdown, nil
}

// NeedLeaderElection is false: the watch runs on every replica.
func (w *controlWatch) NeedLeaderElection() bool { return false }

// Start runs the group's Membership and reads the Lease until ctx ends.
func (w *controlWatch) Start(ctx context.Context) error {
	var wg gosync.WaitGroup
	defer wg.Wait()
	if w.members != nil {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_ = w.members.Run(ctx)
		}()
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case <-w.members.Changes():
					w.signal()
				}
			}
		}()
	}
	w.every(ctx, func() bool { return false })
	return nil
}

// every reads the Lease every period until ctx ends or done, checked
// after each read, says so.
func (w *controlWatch) every(ctx context.Context, done func() bool) {
	t := time.NewTicker(w.period)
	defer t.Stop()
	for {
		w.read(ctx)
		if done() {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// waitForGroup returns once the Lease is free, or held by this operator
// or a member of its group; until then the operator does not act, and
// says so. It fails when ctx ends first.
func (w *controlWatch) waitForGroup(ctx context.Context) error {
	w.every(ctx, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.holder == "" || w.holder == w.self || w.groupOK
	})
	return ctx.Err()
}

func (w *controlWatch) read(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, w.period)
	defer cancel()
	lease, err := w.kube.CoordinationV1().Leases(w.namespace).Get(rctx, LeaseName, metav1.GetOptions{})
	holder := ""
	switch {
	case err == nil:
		holder = leaseHolder(lease, time.Now())
	case apierrors.IsNotFound(err):
	default:
		if ctx.Err() == nil {
			w.log.V(1).Info("cannot read the Lease", "lease", w.namespace+"/"+LeaseName, "error", err.Error())
		}
		return
	}
	groupOK := w.members != nil && holder != "" && w.inGroup(rctx, holder)
	w.mu.Lock()
	changed := groupOK != w.groupOK
	w.holder, w.groupOK = holder, groupOK
	warn := !w.quiet && holder != "" && holder != w.self && !groupOK && holder != w.warned
	if warn {
		w.warned = holder
	}
	w.mu.Unlock()
	if changed {
		w.signal()
	}
	if warn {
		w.refuse(lease, holder)
	}
}

// inGroup reports whether holder holds an unexpired Lease of the group
// (read now, not the Membership's last read, so that a member that has
// just joined is recognised at once).
func (w *controlWatch) inGroup(ctx context.Context, holder string) bool {
	list, err := w.kube.CoordinationV1().Leases(w.namespace).List(ctx, metav1.ListOptions{LabelSelector: shard.LabelGroup + "=" + w.members.Group()})
	if err != nil {
		return slices.Contains(w.members.Members(), holder)
	}
	now := time.Now()
	for i := range list.Items {
		if leaseHolder(&list.Items[i], now) == holder {
			return true
		}
	}
	return false
}

// refuse says that this operator does not act while holder holds the
// namespace.
func (w *controlWatch) refuse(lease *coordinationv1.Lease, holder string) {
	how := "it acts once that Lease is free (give each operator -shard to share the apps instead)"
	if w.members != nil {
		how = "the sharded group acts once that operator stops (it is not started with -shard)"
	}
	msg := fmt.Sprintf("operator %s does not act: operator %s holds namespace %s (Lease %s); %s", w.self, holder, w.namespace, LeaseName, how)
	w.log.Info(msg, "holder", holder, "namespace", w.namespace)
	w.recorder.Event(lease, corev1.EventTypeWarning, ReasonNotActing, msg)
}

func (w *controlWatch) signal() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// Owned is the Membership's answer while a member of the group holds the
// Lease, else nothing (gitops.Sharder).
func (w *controlWatch) Owned(all []string) map[string]bool {
	w.mu.Lock()
	ok := w.groupOK
	w.mu.Unlock()
	if !ok || w.members == nil {
		return map[string]bool{}
	}
	return w.members.Owned(all)
}

// acting reports whether the group may act: a member of it holds the
// Lease.
func (w *controlWatch) acting() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.groupOK && w.members != nil
}

// Changes receives a value whenever Owned may answer differently
// (gitops.Sharder).
func (w *controlWatch) Changes() <-chan struct{} { return w.notify }

// newMembership is this operator's Membership of the group -shard-group,
// its Leases in -namespace.
func newMembership(cfg *rest.Config, f flags, identity string, log logr.Logger) (*shard.Membership, error) {
	so := shard.DefaultOptions()
	so.Namespace, so.Group, so.Identity, so.Log = f.namespace, f.shardGroup, identity, log
	return shard.New(cfg, so)
}

// forgetMembers deletes, every period, the Leases of the group's members
// gone for good (shard.Membership.DeleteExpired), naming them in the log.
// The manager runs it on the member holding the Lease LeaseName only.
func forgetMembers(members *shard.Membership, period time.Duration, log logr.Logger) manager.RunnableFunc {
	return func(ctx context.Context) error {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
			gone, err := members.DeleteExpired(ctx)
			if err != nil && ctx.Err() == nil {
				log.Error(err, "cannot delete the Leases of expired members")
			}
			if len(gone) > 0 {
				log.Info("expired members removed", "group", members.Group(), "members", gone)
			}
		}
	}
}
