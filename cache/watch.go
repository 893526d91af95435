package cache

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/kubegitops/gitops/resource"
)

// kindWatch lists one kind (in one namespace, in namespaced mode) and then
// watches it from the list's resourceVersion, for as long as its context
// lives. Its failures stay its own: it taints its kind, backs off and tries
// again, and never stops another kind.
//
// It uses the dynamic client's List and Watch directly rather than an
// informer: an informer keeps its own copy of every object (which would
// double the memory the trimmed store saves), hides list and watch errors
// behind a global error handler (so a kind cannot be tainted precisely), and
// relists on its own schedule.
type kindWatch struct {
	c         *ClusterCache
	id        watchID
	res       apiResource
	ctx       context.Context
	cancel    context.CancelFunc
	done      chan struct{}
	firstDone chan struct{}
	// denied is set when the access check refused the kind and run ended.
	denied atomic.Bool
}

// wasDenied reports whether the watch ended because access was denied.
func (w *kindWatch) wasDenied() bool {
	select {
	case <-w.done:
		return w.denied.Load()
	default:
		return false
	}
}

func newKindWatch(ctx context.Context, c *ClusterCache, id watchID, res apiResource) *kindWatch {
	ctx, cancel := context.WithCancel(ctx)
	return &kindWatch{c: c, id: id, res: res, ctx: ctx, cancel: cancel, done: make(chan struct{}), firstDone: make(chan struct{})}
}

func (w *kindWatch) stop() {
	w.cancel()
	<-w.done
}

func (w *kindWatch) client() dynamic.ResourceInterface {
	r := w.c.dyn.Resource(w.id.gvr)
	if w.res.namespaced && w.id.namespace != "" {
		return r.Namespace(w.id.namespace)
	}
	return r
}

func (w *kindWatch) taint(reason Reason, err error) {
	w.c.setTaint(w.id, &KindError{GVK: w.res.gvk, Namespace: w.id.namespace, Reason: reason, Err: err})
}

// run is the list-then-watch loop. rv is empty when the kind must be
// (re)listed: at first, after a failed list, and after a 410 Gone.
func (w *kindWatch) run() {
	defer close(w.done)
	firstOnce := func() {
		select {
		case <-w.firstDone:
		default:
			close(w.firstDone)
		}
	}
	defer firstOnce()
	if w.c.opts.RespectRBAC && w.c.review != nil {
		select {
		case w.c.reviewSem <- struct{}{}:
		case <-w.ctx.Done():
			return
		}
		err := accessDenied(w.ctx, w.c.review, w.id)
		<-w.c.reviewSem
		if err != nil {
			w.denied.Store(true)
			w.c.setTaint(w.id, &KindError{GVK: w.res.gvk, Namespace: w.id.namespace, Reason: ReasonForbidden, Err: err})
			return
		}
	}
	// Half the delay, doubling up to half of RetryMax, jittered by up to
	// as much again: each wait is between half the delay and the delay.
	retry := func() wait.Backoff {
		return wait.Backoff{Duration: w.c.opts.RetryInitial / 2, Factor: 2, Jitter: 1, Cap: w.c.opts.RetryMax / 2, Steps: math.MaxInt32}
	}
	b := retry()
	backoff := func() bool {
		t := time.NewTimer(b.Step())
		defer t.Stop()
		select {
		case <-w.ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	rv := ""
	for w.ctx.Err() == nil {
		if rv == "" {
			newRV, err := w.list()
			firstOnce()
			if err != nil {
				if w.ctx.Err() != nil {
					return
				}
				w.taint(ReasonListFailed, err)
				if !backoff() {
					return
				}
				continue
			}
			w.c.clearTaint(w.id)
			b = retry()
			rv = newRV
		}
		began := time.Now()
		newRV, events, err := w.watch(rv)
		rv = newRV
		switch {
		case w.ctx.Err() != nil:
			return
		case err == nil:
			// The server ended the watch (timeout or restart): watch again
			// from rv, after a pause if it ended at once with nothing.
			if events == 0 && time.Since(began) < time.Second && !backoff() {
				return
			}
		case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
			w.c.metrics.relists.Inc()
			rv = ""
		default:
			w.taint(ReasonWatchFailed, err)
			if !backoff() {
				return
			}
		}
	}
}

// list reads every object of the kind in pages and replaces the kind's
// objects in the store, returning the list's resourceVersion. The next page
// is fetched (and decoded) while the current one is stored, so at most two
// pages are in memory at once. An expired continue token restarts the list
// from the beginning.
func (w *kindWatch) list() (string, error) {
	select {
	case w.c.listSem <- struct{}{}:
	case <-w.ctx.Done():
		return "", w.ctx.Err()
	}
	defer func() { <-w.c.listSem }()
	start := time.Now()
	defer func() { w.c.metrics.listSeconds.Observe(time.Since(start).Seconds()) }()

	for {
		rv, restart, err := w.listOnce()
		if restart {
			w.c.metrics.relists.Inc()
			continue
		}
		return rv, err
	}
}

type listPage struct {
	list *unstructured.UnstructuredList
	err  error
}

// listOnce runs one paginated list; restart is true when the continue
// token expired mid-way and the list must start again.
func (w *kindWatch) listOnce() (rv string, restart bool, err error) {
	ctx, cancel := context.WithCancel(w.ctx)
	defer cancel()
	pages := make(chan listPage, 1)
	go func() {
		defer close(pages)
		opts := metav1.ListOptions{Limit: w.c.opts.PageSize}
		for {
			rctx, rcancel := w.c.withRequestTimeout(ctx)
			page, err := w.client().List(rctx, opts)
			rcancel()
			select {
			case pages <- listPage{list: page, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil || page.GetContinue() == "" {
				return
			}
			opts.Continue = page.GetContinue()
		}
	}()
	seen := map[resource.Key]struct{}{}
	first := true
	for p := range pages {
		if p.err != nil {
			if !first && apierrors.IsResourceExpired(p.err) {
				return "", true, nil
			}
			return "", false, p.err
		}
		first = false
		w.c.applyPage(w, p.list.Items, seen)
		if p.list.GetContinue() == "" {
			w.c.removeAbsent(w, seen)
			return p.list.GetResourceVersion(), false, nil
		}
	}
	return "", false, w.ctx.Err()
}

// watch streams changes from rv until the server ends the watch, an error
// event arrives, or the context ends. It returns the last resourceVersion
// seen and how many events arrived.
func (w *kindWatch) watch(rv string) (string, int, error) {
	timeout := w.c.opts.WatchTimeout
	secs := int64((timeout/2 + rand.N(timeout/2+1)).Seconds())
	if secs < 1 {
		secs = 1
	}
	wi, err := w.client().Watch(w.ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true, TimeoutSeconds: &secs})
	if err != nil {
		return rv, 0, err
	}
	defer wi.Stop()
	w.c.clearTaint(w.id)
	n := 0
	for {
		select {
		case <-w.ctx.Done():
			return rv, n, nil
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return rv, n, nil
			}
			n++
			switch ev.Type {
			case watch.Error:
				err := apierrors.FromObject(ev.Object)
				if err == nil {
					err = errors.New("watch error event")
				}
				return rv, n, err
			case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
				obj, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				if v := obj.GetResourceVersion(); v != "" {
					rv = v
				}
				if ev.Type != watch.Bookmark {
					w.c.applyEvent(w, ev.Type, obj)
				}
			}
		}
	}
}
