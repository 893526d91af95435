package shard

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// forgotten reports whether a member's Lease has gone unrenewed for more
// than forgetAfter of its own lease durations at now. A Lease without a
// renew (or acquire) time or duration is judged by its creation time and
// the group's default duration d.
func forgotten(l *coordinationv1.Lease, forgetAfter int, d time.Duration, now time.Time) bool {
	last := l.CreationTimestamp.Time
	switch {
	case l.Spec.RenewTime != nil:
		last = l.Spec.RenewTime.Time
	case l.Spec.AcquireTime != nil:
		last = l.Spec.AcquireTime.Time
	}
	if l.Spec.LeaseDurationSeconds != nil && *l.Spec.LeaseDurationSeconds > 0 {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return now.Sub(last) > time.Duration(forgetAfter)*d
}

// DeleteExpired deletes the group's Leases whose holders stopped renewing
// them more than Options.ForgetAfter lease durations ago, and returns the
// members they named (the Lease's name when it names none). A Lease
// renewed meanwhile is kept: each delete is conditional on the version
// read. One replica of the group runs it (the operator: the one holding
// its control Lease); a Lease already gone counts as deleted.
func (m *Membership) DeleteExpired(ctx context.Context) ([]string, error) {
	lctx, cancel := context.WithTimeout(ctx, m.opts.RenewDeadline)
	defer cancel()
	leases := m.client.CoordinationV1().Leases(m.opts.Namespace)
	list, err := leases.List(lctx, metav1.ListOptions{LabelSelector: LabelGroup + "=" + m.opts.Group})
	if err != nil {
		return nil, fmt.Errorf("shard: list the Leases of group %s in %s: %w", m.opts.Group, m.opts.Namespace, err)
	}
	var gone []string
	var errs []error
	now := time.Now()
	for i := range list.Items {
		l := &list.Items[i]
		if !forgotten(l, m.opts.ForgetAfter, m.opts.LeaseDuration, now) {
			continue
		}
		rv := l.ResourceVersion
		err := leases.Delete(lctx, l.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			name := l.Name
			if h := l.Spec.HolderIdentity; h != nil && *h != "" {
				name = *h
			}
			gone = append(gone, name)
		case apierrors.IsConflict(err):
			// Renewed since it was read: the member is back.
		default:
			errs = append(errs, fmt.Errorf("shard: delete the expired Lease %s/%s: %w", m.opts.Namespace, l.Name, err))
		}
	}
	return gone, errors.Join(errs...)
}
