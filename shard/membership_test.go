package shard

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kubegitops/gitops/testenv"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.RunMain(m, testenv.Options{APIServerOnly: true}, &cluster))
}

func fastOptions(ns, id string) Options {
	o := DefaultOptions()
	o.Namespace, o.Group, o.Identity = ns, "test", id
	o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 3*time.Second, 2*time.Second, 250*time.Millisecond
	return o
}

type replica struct {
	m    *Membership
	stop context.CancelFunc
	done chan struct{}
}

func startReplica(t *testing.T, ns, id string) *replica {
	t.Helper()
	m, err := New(cluster.Config(), fastOptions(ns, id))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{m: m, stop: cancel, done: make(chan struct{})}
	go func() { defer close(r.done); _ = m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// partitioned waits until the replicas own every key exactly once between
// them, and returns who owns what.
func partitioned(t *testing.T, keys []string, rs ...*replica) map[string]string {
	t.Helper()
	var owner map[string]string
	var why string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		owner, why = map[string]string{}, ""
		for _, r := range rs {
			for k := range r.m.Owned(keys) {
				if o, dup := owner[k]; dup {
					why = fmt.Sprintf("%s owned by %s and %s", k, o, r.m.Identity())
					return false, nil
				}
				owner[k] = r.m.Identity()
			}
		}
		if len(owner) != len(keys) {
			why = fmt.Sprintf("%d of %d keys owned", len(owner), len(keys))
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("never partitioned: %s", why)
	}
	return owner
}

func TestMembersSplitTheKeysAndTakeOver(t *testing.T) {
	ns := cluster.TestNamespace(t)
	keys := names("app", 60)
	a, b, c := startReplica(t, ns, "a"), startReplica(t, ns, "b"), startReplica(t, ns, "c")
	owner := partitioned(t, keys, a, b, c)
	per := map[string]int{}
	for _, o := range owner {
		per[o]++
	}
	if len(per) != 3 {
		t.Fatalf("not every replica got work: %v", per)
	}
	// Ownership never overlaps, even while it moves: sample it while c
	// stops and a and b take its keys.
	start := time.Now()
	c.stop()
	<-c.done
	overlap := make(chan string, 1)
	sampling, cancel := context.WithCancel(context.Background())
	go func() {
		for sampling.Err() == nil {
			seen := map[string]bool{}
			for _, r := range []*replica{a, b} {
				for k := range r.m.Owned(keys) {
					if seen[k] {
						select {
						case overlap <- k:
						default:
						}
					}
					seen[k] = true
				}
			}
		}
	}()
	after := partitioned(t, keys, a, b)
	cancel()
	t.Logf("takeover after a clean stop: %v", time.Since(start))
	select {
	case k := <-overlap:
		t.Fatalf("%s owned by two replicas during the takeover", k)
	default:
	}
	for k, o := range owner {
		if o != "c" && after[k] != o {
			t.Errorf("%s moved from %s to %s though its owner stayed", k, o, after[k])
		}
	}
}

// A replica that dies without releasing its Lease loses its keys once the
// Lease expires.
func TestExpiredLeaseLosesItsKeys(t *testing.T) {
	ns := cluster.TestNamespace(t)
	kc := kubernetes.NewForConfigOrDie(cluster.Config())
	now := metav1.NewMicroTime(time.Now())
	ghost := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "test-ghost", Namespace: ns, Labels: map[string]string{LabelGroup: "test"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("ghost"), LeaseDurationSeconds: ptr.To[int32](4),
			AcquireTime: &now, RenewTime: &now},
	}
	if _, err := kc.CoordinationV1().Leases(ns).Create(context.Background(), ghost, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a := startReplica(t, ns, "a")
	keys := names("app", 40)
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return len(a.m.Members()) == 2, nil
	})
	if err != nil {
		t.Fatalf("the ghost never counted as a member: %v", a.m.Members())
	}
	if n := len(a.m.Owned(keys)); n == len(keys) {
		t.Fatal("a owns every key while the ghost is alive")
	}
	partitioned(t, keys, a) // once the ghost's Lease expires
	if m := a.m.Members(); len(m) != 1 || m[0] != "a" {
		t.Fatalf("members after expiry: %v", m)
	}
}

func TestNewNeedsANamespace(t *testing.T) {
	if _, err := New(cluster.Config(), Options{}); err == nil {
		t.Fatal("no error without a namespace")
	}
}
