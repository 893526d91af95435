package shard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	gosync "sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LabelGroup labels the Leases of one group of replicas with its name.
const LabelGroup = "shard.kubegitops.io/group"

// AnnotationOwner names, on an object a host reconciles (an Application),
// the member of the group that reconciles it; the host writes it when a
// member takes the object, so people and tools (gitopsctl shards) see who
// works on what.
const AnnotationOwner = "shard.kubegitops.io/owner"

// Options configure a Membership.
type Options struct {
	// Namespace holds the group's Leases. Required.
	Namespace string
	// Group names the set of replicas that share the apps. Default
	// "gitops".
	Group string
	// Identity is this replica's name, unique in the group. Default: the
	// host name and a random suffix.
	Identity string
	// LeaseDuration is how long a replica that stopped renewing still
	// counts as a member: the longest a crashed replica's apps wait for a
	// new owner. Default 15 s.
	LeaseDuration time.Duration
	// RenewDeadline is how long a replica keeps trying to renew its Lease
	// before it gives up its apps. Default 10 s.
	RenewDeadline time.Duration
	// RetryPeriod is how often Leases are renewed and the group is read.
	// Default 2 s.
	RetryPeriod time.Duration
	// ForgetAfter is how many of its own lease durations a member's Lease
	// stays after its holder last renewed it before DeleteExpired deletes
	// it, so that a member gone for good stops showing in the group's
	// Leases (kubectl, gitopsctl shards). Default 4.
	ForgetAfter int
	// Ring shapes the assignment of apps to members.
	Ring RingOptions
	// Log receives membership changes.
	Log logr.Logger
}

// DefaultOptions returns a group "gitops" with 15 s leases renewed every
// 2 s; Namespace must still be set.
func DefaultOptions() Options {
	return Options{
		Group:         "gitops",
		LeaseDuration: 15 * time.Second,
		RenewDeadline: 10 * time.Second,
		RetryPeriod:   2 * time.Second,
		ForgetAfter:   4,
		Ring:          DefaultRingOptions(),
		Log:           logr.Discard(),
	}
}

// Membership is this replica's place in a group of replicas that share
// applications. Each replica holds a Lease of its own (through client-go's
// leaderelection, so renewal and release follow its well-known rules) and
// reads the group's Leases; the live members are the holders of unexpired
// Leases, and apps go to members by Assign. Run it for the replica's
// life; it is the engine's Sharder.
type Membership struct {
	opts   Options
	client kubernetes.Interface

	mu      gosync.Mutex
	leading bool
	members []string  // the live members last read
	prev    []string  // the members before the last change
	changed time.Time // when members last changed
	notify  chan struct{}
}

// New returns the membership of this replica, not yet started.
func New(cfg *rest.Config, opts Options) (*Membership, error) {
	d := DefaultOptions()
	if opts.Namespace == "" {
		return nil, fmt.Errorf("shard: Options.Namespace is required")
	}
	if opts.Group == "" {
		opts.Group = d.Group
	}
	if opts.Identity == "" {
		host, _ := os.Hostname()
		var b [3]byte
		_, _ = rand.Read(b[:])
		opts.Identity = host + "-" + hex.EncodeToString(b[:])
	}
	if opts.LeaseDuration <= 0 {
		opts.LeaseDuration = d.LeaseDuration
	}
	if opts.RenewDeadline <= 0 {
		opts.RenewDeadline = d.RenewDeadline
	}
	if opts.RetryPeriod <= 0 {
		opts.RetryPeriod = d.RetryPeriod
	}
	if opts.ForgetAfter <= 0 {
		opts.ForgetAfter = d.ForgetAfter
	}
	if opts.Log.GetSink() == nil {
		opts.Log = d.Log
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	return &Membership{opts: opts, client: client, notify: make(chan struct{}, 1)}, nil
}

// Identity returns this replica's name in the group.
func (m *Membership) Identity() string { return m.opts.Identity }

// Group returns the name of the group.
func (m *Membership) Group() string { return m.opts.Group }

// leaseName is the Lease's name: "<group>-<identity>" when that is a
// valid object name (a Pod's name always is), so `kubectl get leases`
// shows who is who; otherwise the group and a hash of the identity.
func (m *Membership) leaseName() string {
	if name := m.opts.Group + "-" + m.opts.Identity; len(validation.IsDNS1123Subdomain(name)) == 0 {
		return name
	}
	sum := sha256.Sum256([]byte(m.opts.Identity))
	return m.opts.Group + "-" + hex.EncodeToString(sum[:6])
}

// Run holds this replica's Lease and follows the group until ctx ends;
// then it releases the Lease at once so the others take over without
// waiting for it to expire. It returns ctx's error.
func (m *Membership) Run(ctx context.Context) error {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: m.leaseName(), Namespace: m.opts.Namespace},
		Labels:     map[string]string{LabelGroup: m.opts.Group},
		Client:     m.client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: m.opts.Identity},
	}
	var wg gosync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		m.hold(ctx, lock)
	}()
	t := time.NewTicker(m.opts.RetryPeriod)
	defer t.Stop()
	for {
		m.read(ctx)
		select {
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// hold keeps this replica's Lease, acquiring it again whenever it is lost
// (the API server unreachable for longer than RenewDeadline).
func (m *Membership) hold(ctx context.Context, lock resourcelock.Interface) {
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   m.opts.LeaseDuration,
			RenewDeadline:   m.opts.RenewDeadline,
			RetryPeriod:     m.opts.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            m.leaseName(),
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) { m.setLeading(true) },
				OnStoppedLeading: func() { m.setLeading(false) },
			},
		})
		if err != nil {
			m.opts.Log.Error(err, "shard: lease configuration")
			return
		}
		le.Run(ctx)
	}
}

func (m *Membership) setLeading(v bool) {
	m.mu.Lock()
	changed := m.leading != v
	m.leading = v
	m.mu.Unlock()
	if changed {
		m.opts.Log.Info("shard: lease", "identity", m.opts.Identity, "held", v)
		m.signal()
	}
}

// read lists the group's Leases and records the live members.
func (m *Membership) read(ctx context.Context) {
	lctx, cancel := context.WithTimeout(ctx, m.opts.RetryPeriod)
	defer cancel()
	list, err := m.client.CoordinationV1().Leases(m.opts.Namespace).List(lctx, metav1.ListOptions{LabelSelector: LabelGroup + "=" + m.opts.Group})
	if err != nil {
		if ctx.Err() == nil {
			m.opts.Log.V(1).Info("shard: cannot read the group's leases", "error", err.Error())
		}
		return
	}
	live := liveMembers(list.Items, time.Now())
	m.mu.Lock()
	same := equal(live, m.members)
	if !same {
		m.prev, m.members, m.changed = m.members, live, time.Now()
	}
	m.mu.Unlock()
	if !same {
		m.opts.Log.Info("shard: members", "group", m.opts.Group, "members", live)
		m.signal()
		// Ownership widens once the grace has passed; say so then.
		time.AfterFunc(m.grace(), m.signal)
	}
}

// liveMembers returns the holders of unexpired Leases, sorted.
func liveMembers(leases []coordinationv1.Lease, now time.Time) []string {
	var out []string
	for _, l := range leases {
		s := l.Spec
		if s.HolderIdentity == nil || *s.HolderIdentity == "" || s.RenewTime == nil || s.LeaseDurationSeconds == nil {
			continue
		}
		if now.After(s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second)) {
			continue
		}
		out = append(out, *s.HolderIdentity)
	}
	sort.Strings(out)
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (m *Membership) signal() {
	select {
	case m.notify <- struct{}{}:
	default:
	}
}

// grace is how long after a change of members a replica waits before it
// takes apps it gains: every other replica reads the group within one
// RetryPeriod, so by then the apps' previous owners have let them go.
func (m *Membership) grace() time.Duration { return 2 * m.opts.RetryPeriod }

// Members returns the live members last read, sorted.
func (m *Membership) Members() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.members...)
}

// Owned returns which of all this replica owns now, by these rules:
//   - nothing while this replica does not hold its Lease (not yet
//     acquired, or lost for longer than RenewDeadline);
//   - otherwise the apps Assign gives it among the live members;
//   - for a grace of two RetryPeriods after the members change, only the
//     apps it owned under both the old and the new members: apps it loses
//     are let go at once, apps it gains are taken only once the other
//     replicas have seen the change and let them go. A replica that just
//     joined therefore starts working one grace after it is seen.
func (m *Membership) Owned(all []string) map[string]bool {
	m.mu.Lock()
	leading, members, prev, changed := m.leading, m.members, m.prev, m.changed
	m.mu.Unlock()
	out := map[string]bool{}
	if !leading {
		return out
	}
	self := m.opts.Identity
	now := Assign(all, members, m.opts.Ring)
	var before map[string]string
	if time.Since(changed) < m.grace() {
		before = Assign(all, prev, m.opts.Ring)
	}
	for _, k := range all {
		if now[k] == self && (before == nil || before[k] == self) {
			out[k] = true
		}
	}
	return out
}

// Changes receives a value whenever Owned may answer differently.
func (m *Membership) Changes() <-chan struct{} { return m.notify }
