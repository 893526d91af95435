package shard

import (
	"context"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestDeleteExpiredForgetsGoneMembers: a member's Lease unrenewed for more
// than ForgetAfter lease durations is deleted; a Lease only just expired,
// a live member's and another group's stay; a second pass deletes
// nothing.
func TestDeleteExpiredForgetsGoneMembers(t *testing.T) {
	ns := cluster.TestNamespace(t)
	ctx := context.Background()
	kc := kubernetes.NewForConfigOrDie(cluster.Config())
	lease := func(name, group, holder string, renewed time.Duration) {
		t.Helper()
		at := metav1.NewMicroTime(time.Now().Add(-renewed))
		l := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{LabelGroup: group}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To[int32](4),
				AcquireTime: &at, RenewTime: &at},
		}
		if _, err := kc.CoordinationV1().Leases(ns).Create(ctx, l, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	lease("test-gone", "test", "gone", time.Minute)          // 60 s > 4 x 4 s
	lease("test-late", "test", "late", 10*time.Second)       // expired, not yet forgotten
	lease("other-gone", "other", "elsewhere", 5*time.Minute) // another group's
	a := startReplica(t, ns, "a")
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return slices.Contains(a.m.Members(), "a"), nil
	})
	if err != nil {
		t.Fatalf("a never became a member: %v", a.m.Members())
	}

	gone, err := a.m.DeleteExpired(ctx)
	if err != nil || !slices.Equal(gone, []string{"gone"}) {
		t.Fatalf("DeleteExpired: %v %v, want [gone]", gone, err)
	}
	list, err := kc.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, l := range list.Items {
		left = append(left, l.Name)
	}
	slices.Sort(left)
	if want := []string{"other-gone", "test-a", "test-late"}; !slices.Equal(left, want) {
		t.Errorf("Leases left %v, want %v", left, want)
	}
	if gone, err := a.m.DeleteExpired(ctx); err != nil || len(gone) != 0 {
		t.Errorf("second pass: %v %v, want nothing deleted", gone, err)
	}
}

// TestForgotten is the rule DeleteExpired applies.
func TestForgotten(t *testing.T) {
	now := time.Now()
	at := func(d time.Duration) *metav1.MicroTime { m := metav1.NewMicroTime(now.Add(-d)); return &m }
	for _, c := range []struct {
		name string
		spec coordinationv1.LeaseSpec
		want bool
	}{
		{"renewed 61 s ago, 15 s Lease", coordinationv1.LeaseSpec{RenewTime: at(61 * time.Second), LeaseDurationSeconds: ptr.To[int32](15)}, true},
		{"renewed 59 s ago, 15 s Lease", coordinationv1.LeaseSpec{RenewTime: at(59 * time.Second), LeaseDurationSeconds: ptr.To[int32](15)}, false},
		{"acquired only, 2 min ago", coordinationv1.LeaseSpec{AcquireTime: at(2 * time.Minute)}, true},
		{"no times, created now", coordinationv1.LeaseSpec{}, false},
	} {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now)}, Spec: c.spec}
		if got := forgotten(l, 4, 15*time.Second, now); got != c.want {
			t.Errorf("%s: forgotten %v, want %v", c.name, got, c.want)
		}
	}
}
