package main

import (
	"fmt"
	"math"
	"os"
	gosync "sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/argocdcm"
	"github.com/kubegitops/gitops/examples/operator/appsets"
)

// appSetOptions puts argocd-cmd-params-cm's applicationsetcontroller.*
// keys into the ApplicationSet reconciler's options, as Argo CD's
// ApplicationSet controller takes them from its command line (at start):
// requeue.after, concurrent.reconciliations.max, policy and
// enable.policy.override, enable.progressive.syncs (off unless set, as in
// Argo CD), namespaces, global.preserved.*, status.max.resources.count,
// dryrun, wq.* and the SCM settings: enable.scm.providers and
// allowed.scm.providers into the generators' SCM policy, scm.root.ca.path
// (the file's certificates) and enable.tokenref.strict.mode into the
// providers' options.
func appSetOptions(opts *appsets.Options, p *argocdcm.Params) error {
	if p == nil {
		p = &argocdcm.Params{}
	}
	a := p.AppSets
	if a.RequeueAfter > 0 {
		opts.Interval = a.RequeueAfter
	}
	if a.ConcurrentReconciliations > 0 {
		opts.MaxConcurrentReconciles = a.ConcurrentReconciliations
	}
	s := &opts.Settings
	s.Policy = a.Policy
	// Argo CD: the override defaults to allowed only when no policy is set.
	s.PolicyOverride = a.Policy == ""
	if a.PolicyOverride != nil {
		s.PolicyOverride = *a.PolicyOverride
	}
	s.ProgressiveSyncs = a.ProgressiveSyncs
	s.Namespaces = a.Namespaces
	s.PreservedAnnotations, s.PreservedLabels = a.PreservedAnnotations, a.PreservedLabels
	s.MaxStatusResources = a.MaxStatusResources
	s.DryRun = a.DryRun
	opts.Generate.SCM = appset.SCMPolicy{Disabled: a.SCMProviders != nil && !*a.SCMProviders, AllowedAPIs: a.AllowedSCMProviders}
	opts.Providers.TokenRefStrict = a.TokenRefStrict
	if q := a.Queue; q != (argocdcm.QueueParams{}) {
		s.RateLimiter = queueLimiter(q)
	}
	if a.SCMRootCAPath != "" {
		pem, err := os.ReadFile(a.SCMRootCAPath)
		if err != nil {
			return fmt.Errorf("argocd-cmd-params-cm applicationsetcontroller.scm.root.ca.path: %w", err)
		}
		opts.Providers.RootCAPEM = pem
	}
	return nil
}

// queueLimiter is Argo CD's ApplicationSet work queue rate limiter: the
// slower of a per-item exponential backoff (BaseDelay, times
// BackoffFactor per failure, at most MaxDelay) and a token bucket
// (BucketQPS, BucketSize); unset fields take Argo CD's defaults.
func queueLimiter(q argocdcm.QueueParams) workqueue.TypedRateLimiter[reconcile.Request] {
	if q.BucketSize == 0 {
		q.BucketSize = 500
	}
	if q.BucketQPS == 0 {
		q.BucketQPS = math.MaxFloat64
	}
	if q.BaseDelay == 0 {
		q.BaseDelay = time.Millisecond
	}
	if q.MaxDelay == 0 {
		q.MaxDelay = 1000 * time.Second
	}
	if q.BackoffFactor == 0 {
		q.BackoffFactor = 1.5
	}
	return workqueue.NewTypedMaxOfRateLimiter[reconcile.Request](
		&factorLimiter{base: q.BaseDelay, max: q.MaxDelay, factor: q.BackoffFactor, failures: map[reconcile.Request]int{}},
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(q.BucketQPS), q.BucketSize)},
	)
}

// factorLimiter waits base times factor^failures, at most max, per item.
type factorLimiter struct {
	base, max time.Duration
	factor    float64
	mu        gosync.Mutex
	failures  map[reconcile.Request]int
}

// When counts one more failure of item and returns how long it waits:
// base times factor to the failures before this one, at most max.
func (l *factorLimiter) When(item reconcile.Request) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.failures[item]
	l.failures[item] = n + 1
	d := float64(l.base) * math.Pow(l.factor, float64(n))
	if d > float64(l.max) {
		return l.max
	}
	return time.Duration(d)
}

// Forget clears item's failures: its next wait is base again.
func (l *factorLimiter) Forget(item reconcile.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.failures, item)
}

// NumRequeues is the number of failures counted for item.
func (l *factorLimiter) NumRequeues(item reconcile.Request) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failures[item]
}
