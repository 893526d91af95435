package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
)

// The operator's start, in the order that keeps a second copy from
// writing anything: it binds its ports first (a second operator on the
// same host fails here, naming the address, having read and written
// nothing), then holds the Lease (a second operator waits here; sharded,
// it waits for a namespace held by no operator outside its group,
// shards.go), and only then installs its CRDs and starts the manager,
// whose controllers write once their caches have synced.

// LeaseName is the Lease of -namespace an operator holds before it
// writes; of a sharded group, the member holding it runs what runs once.
const LeaseName = "gitops-operator"

// endpoints are the operator's HTTP endpoints, bound at start: metrics
// (with Go's profile when controller.profile.enabled is true) and the
// health probes, whose /readyz answers once the caches have synced.
type endpoints struct {
	metrics, probes net.Listener
	ready           atomic.Bool
	servers         []*http.Server
}

// ErrAddressInUse wraps the failure to bind an endpoint's address.
var ErrAddressInUse = errors.New("cannot listen")

// bindEndpoints binds the metrics and probe addresses ("0" or "": none).
// It fails, naming the address, when one is taken.
func bindEndpoints(metrics, probes string) (*endpoints, error) {
	e := &endpoints{}
	var err error
	if e.metrics, err = listen("metrics", metrics); err != nil {
		return nil, err
	}
	if e.probes, err = listen("health probe", probes); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func listen(what, addr string) (net.Listener, error) {
	if addr == "" || addr == "0" {
		return nil, nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w on the %s address %s (is another operator running?): %w", ErrAddressInUse, what, addr, err)
	}
	return l, nil
}

// close closes the listeners that are not served yet.
func (e *endpoints) close() {
	for _, l := range []net.Listener{e.metrics, e.probes} {
		if l != nil {
			_ = l.Close()
		}
	}
}

// serve serves the endpoints until ctx ends: the metrics of gatherer,
// Go's profile when profile is set, /healthz, and /readyz once ready.
func (e *endpoints) serve(ctx context.Context, gatherer prometheus.Gatherer, profile bool, log logr.Logger) {
	if e.metrics != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
		if profile {
			mux.HandleFunc("/debug/pprof/", pprof.Index)
			mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
			mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
			mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
		e.start(ctx, e.metrics, mux, log)
	}
	if e.probes != nil {
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			if !e.ready.Load() {
				http.Error(w, "caches not synced", http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte("ok"))
		})
		e.start(ctx, e.probes, mux, log)
	}
}

func (e *endpoints) start(ctx context.Context, l net.Listener, h http.Handler, log logr.Logger) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	e.servers = append(e.servers, srv)
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(err, "endpoint stopped", "address", l.Addr().String())
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
}

// holdLease blocks until this operator, identity, holds the Lease
// LeaseName in namespace, and keeps renewing it; lost is closed when it is
// lost (the operator then stops), and the Lease is released when ctx
// ends. While it waits, watch says which operator holds the Lease.
func holdLease(ctx context.Context, kube kubernetes.Interface, namespace, identity string, watch *controlWatch, log logr.Logger) (lost <-chan struct{}, err error) {
	acquired, gone := make(chan struct{}), make(chan struct{})
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: leaseLock(kube, namespace, identity), LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		ReleaseOnCancel: true, Name: LeaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { close(acquired) },
			OnStoppedLeading: func() { close(gone) },
		},
	})
	if err != nil {
		return nil, err
	}
	log.Info("waiting for the Lease", "lease", namespace+"/"+LeaseName, "identity", identity)
	go le.Run(ctx)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go watch.every(wctx, func() bool { return false })
	select {
	case <-acquired:
		log.Info("holding the Lease", "lease", namespace+"/"+LeaseName)
		return gone, nil
	case <-gone:
		return nil, fmt.Errorf("lease %s/%s: %w", namespace, LeaseName, context.Cause(ctx))
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
