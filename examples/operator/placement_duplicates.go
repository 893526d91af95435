package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	gosync "sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops/shard"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
)

// AnnotationReplica is the replica number a member placed by cluster
// (Argo CD's StatefulSet placement) writes on its own Lease of the group,
// so that two members with one number are seen (kubectl shows it too).
const AnnotationReplica = "shard.kubegitops.io/replica"

// ReasonDuplicateReplica is the Warning Event, on the Lease of the member
// that stands down, of two live members with one replica number; the
// message names both.
const ReasonDuplicateReplica = "DuplicateReplica"

// replicaClaims finds, among the live members of the group, another that
// carries this replica's number (AnnotationReplica on its Lease). Of two,
// the one whose Lease was acquired later does not act (Argo CD would have
// both act on one shard) until the other is gone; it says so once per
// other member, in its log and an Event. It runs on every replica placed
// by cluster without dynamic distribution, whose number no ConfigMap
// claims.
type replicaClaims struct {
	kube      kubernetes.Interface
	namespace string
	group     string
	self      string
	number    int
	period    time.Duration
	recorder  record.EventRecorder
	log       logr.Logger
	// changed is called when the replica starts or stops standing down.
	changed func()

	mu        gosync.Mutex
	checked   bool   // the group's Leases were read with this replica's
	blockedBy string // the member this one stands down for
	reported  string // the member last reported
}

// NeedLeaderElection is false: every replica checks its number.
func (r *replicaClaims) NeedLeaderElection() bool { return false }

// clear reports whether this replica may act: the group's Leases were
// read since its own was held, and no member there first has its number.
func (r *replicaClaims) clear() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.checked && r.blockedBy == ""
}

// Start checks the group's Leases every period until ctx ends.
func (r *replicaClaims) Start(ctx context.Context) error {
	t := time.NewTicker(r.period)
	defer t.Stop()
	for {
		r.check(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// check writes this replica's number on its Lease when it is missing and
// looks for another live member with the same number.
func (r *replicaClaims) check(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, r.period)
	defer cancel()
	leases := r.kube.CoordinationV1().Leases(r.namespace)
	list, err := leases.List(cctx, metav1.ListOptions{LabelSelector: shard.LabelGroup + "=" + r.group})
	if err != nil {
		if ctx.Err() == nil {
			r.log.V(1).Info("cannot read the group's Leases", "error", err.Error())
		}
		return
	}
	now, want := time.Now(), strconv.Itoa(r.number)
	var own *coordinationv1.Lease
	var same []*coordinationv1.Lease
	for i := range list.Items {
		l := &list.Items[i]
		switch holder := leaseHolder(l, now); {
		case holder == r.self:
			own = l
		case holder != "" && l.Annotations[AnnotationReplica] == want:
			same = append(same, l)
		}
	}
	if own == nil {
		return // this replica's Lease is not held yet
	}
	if own.Annotations[AnnotationReplica] != want {
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, AnnotationReplica, want)
		if _, err := leases.Patch(cctx, own.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && ctx.Err() == nil {
			r.log.Error(err, "cannot write this replica's number on its Lease", "lease", r.namespace+"/"+own.Name)
		}
	}
	blockedBy := ""
	if first := firstAcquired(append(same, own)); first != own {
		blockedBy = *first.Spec.HolderIdentity
	}
	r.mu.Lock()
	was, wasChecked := r.blockedBy, r.checked
	r.blockedBy, r.checked = blockedBy, true
	report := blockedBy != "" && blockedBy != r.reported
	if report {
		r.reported = blockedBy
	}
	r.mu.Unlock()
	if report {
		msg := fmt.Sprintf("replicas %s and %s both are replica %d: %s, which took its Lease later, does not act while %s runs", blockedBy, r.self, r.number, r.self, blockedBy)
		r.log.Info(msg, "replica", r.number, "holder", blockedBy)
		r.recorder.Event(own, corev1.EventTypeWarning, ReasonDuplicateReplica, msg)
	}
	if was != blockedBy || !wasChecked {
		if blockedBy == "" && wasChecked {
			r.log.Info("no other live member is this replica's number: it acts", "replica", r.number)
		}
		r.changed()
	}
}

// firstAcquired returns the Lease acquired first (by acquire time, then
// holder name).
func firstAcquired(leases []*coordinationv1.Lease) *coordinationv1.Lease {
	acquired := func(l *coordinationv1.Lease) time.Time {
		if l.Spec.AcquireTime == nil {
			return l.CreationTimestamp.Time
		}
		return l.Spec.AcquireTime.Time
	}
	sort.SliceStable(leases, func(i, j int) bool {
		a, b := acquired(leases[i]), acquired(leases[j])
		if !a.Equal(b) {
			return a.Before(b)
		}
		return *leases[i].Spec.HolderIdentity < *leases[j].Spec.HolderIdentity
	})
	return leases[0]
}
