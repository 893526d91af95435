package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/wait"
)

// ControllerOptions configure a Controller.
type ControllerOptions struct {
	// State remembers what was sent. Default: a MemoryState, which a
	// restart forgets, so that it sends again what is still due: a host
	// that runs gives an AnnotationState (Argo CD's annotation on the
	// Application) or a StoreState.
	State State
	// Registerer receives the controller's metrics. Nil: none.
	Registerer prometheus.Registerer
	// Log receives what the controller does; never a secret.
	Log logr.Logger
	// QueueSize bounds the application changes waiting to be evaluated;
	// past it, Observe and Notify drop (and count) rather than block.
	// Default 1024.
	QueueSize int
	// Senders bounds the deliveries in flight. Default 4.
	Senders int
	// Retry says how often one delivery is attempted before it counts as
	// failed: Steps attempts in all, waiting Duration, then Factor times
	// longer each time (with Jitter), at most Cap. Default one attempt, as
	// Argo CD's notifications controller makes: each service retries as
	// its own options say (the webhook's retryMax, retryWaitMin and
	// retryWaitMax), and a failed delivery is tried again at the next
	// evaluation (RetryAfter).
	Retry wait.Backoff
	// SendTimeout bounds one attempt of one delivery, the service's own
	// retries included. Default one minute.
	SendTimeout time.Duration
	// RetryAfter is how long after a failed delivery the controller
	// evaluates its Application again, from the last state it observed, so
	// that a notification still due is sent again, as Argo CD's
	// notifications controller does on its next resync of the
	// Application. Default 60 s, Argo CD's resync period. A change of the
	// Application observed sooner evaluates it sooner.
	RetryAfter time.Duration
	// OnFailure, when set, is called with each delivery that failed (after
	// its attempts): the Application's key and the error, which names the
	// trigger, template and destination and holds no secret. The
	// notification is not recorded as sent. It is called from the
	// controller's goroutines and must not block long. The operator writes a Warning
	// Event on the Application.
	OnFailure func(app v1alpha1.AppKey, err *DeliveryError)
	// ApplicationOf and StatusOf let Notify (the engine's Options.Notify)
	// find the Application an engine notification is about, by its key
	// (Notification.Key: namespace and name), and its last status
	// (Engine.Apps().AppStatus of the key). One of
	// ApplicationOf and Application is required for Notify; StatusOf and
	// Status are optional (without them, the status is what notifications
	// said). ApplicationOf and StatusOf win over Application and Status.
	ApplicationOf func(key v1alpha1.AppKey) (*v1alpha1.Application, bool)
	StatusOf      func(key v1alpha1.AppKey) (appstatus.Status, bool)
	// Application finds the Application of an engine notification by its
	// name alone (Notification.Key.Name).
	//
	// Deprecated: two apps of one name in two namespaces look alike; use
	// ApplicationOf.
	Application func(name string) (*v1alpha1.Application, bool)
	// Status finds the last status of an engine notification's app by its
	// name alone (Notification.Key.Name).
	//
	// Deprecated: use StatusOf.
	Status func(name string) (appstatus.Status, bool)
}

// DefaultControllerOptions returns the defaults: a memory state, one
// attempt of each delivery within a minute, the next evaluation of an
// Application whose delivery failed 60 s later.
func DefaultControllerOptions() ControllerOptions {
	return ControllerOptions{
		Log: logr.Discard(), QueueSize: 1024, Senders: 4, SendTimeout: time.Minute,
		Retry: wait.Backoff{Steps: 1, Duration: time.Second, Factor: 2, Cap: time.Minute}, RetryAfter: time.Minute,
	}
}

// Controller evaluates triggers on application changes and delivers what
// they send to the subscribed destinations, each once per condition change
// (and once per oncePer value). Observe and Notify only queue, so they never
// block a reconcile; Run evaluates and delivers in the background. A
// delivery is recorded as sent (State) only once its service delivered it;
// one that failed is not, and is sent again by the next evaluation that
// finds it still due.
type Controller struct {
	cfg     atomic.Pointer[Config]
	opts    ControllerOptions
	metrics *metrics
	queue   chan observation
	sends   chan delivery

	pending  atomic.Int64 // queued or being evaluated
	mu       gosync.Mutex
	inflight map[string]int        // deliveries in flight per state key
	retrying map[string]*retry     // apps to evaluate again after a failed delivery, by appID
	stopped  bool                  // Run has ended: no more retries
	engine   map[string]*engineApp // Notify's view of each app; Run's goroutine only
}

// retry is an Application to evaluate again when its timer fires: the
// last state observed of it.
type retry struct {
	app   map[string]any
	timer *time.Timer
}

type observation struct {
	app  map[string]any
	note *appstatus.Notification
}

type delivery struct {
	key     string
	app     map[string]any
	trigger string
	to      Destination
	msg     Message
}

// NewController returns a Controller for cfg. Zero option fields take
// their defaults.
func NewController(cfg *Config, opts ControllerOptions) (*Controller, error) {
	if cfg == nil {
		return nil, errors.New("notify: no config")
	}
	d := DefaultControllerOptions()
	if opts.State == nil {
		opts.State = NewMemoryState()
	}
	if opts.Log.GetSink() == nil {
		opts.Log = d.Log
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = d.QueueSize
	}
	if opts.Senders <= 0 {
		opts.Senders = d.Senders
	}
	if opts.SendTimeout <= 0 {
		opts.SendTimeout = d.SendTimeout
	}
	if opts.Retry.Steps <= 0 {
		opts.Retry = d.Retry
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = d.RetryAfter
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	c := &Controller{opts: opts, metrics: m, queue: make(chan observation, opts.QueueSize),
		sends: make(chan delivery, opts.QueueSize), inflight: map[string]int{}, retrying: map[string]*retry{},
		engine: map[string]*engineApp{}}
	c.cfg.Store(cfg)
	return c, nil
}

// SetConfig replaces the configuration (a reloaded ConfigMap) for the
// changes observed from now on.
func (c *Controller) SetConfig(cfg *Config) {
	if cfg != nil {
		c.cfg.Store(cfg)
	}
}

// Observe queues an Application (appstatus.Object's map, or any map of
// Argo CD's Application shape) for evaluation. It never blocks: it returns
// false when the queue is full and the change was dropped. The controller
// reads app later, on Run's goroutine: the caller must not modify it.
func (c *Controller) Observe(app map[string]any) bool {
	return c.enqueue(observation{app: app})
}

func (c *Controller) enqueue(o observation) bool {
	c.pending.Add(1)
	select {
	case c.queue <- o:
		return true
	default:
		c.pending.Add(-1)
		c.metrics.dropped.Inc()
		return false
	}
}

// Run evaluates and delivers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	var wg gosync.WaitGroup
	for i := 0; i < c.opts.Senders; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case d := <-c.sends:
					c.deliver(ctx, d)
				}
			}
		}()
	}
	defer wg.Wait()
	defer c.stopRetries()
	for {
		select {
		case <-ctx.Done():
			return nil
		case o := <-c.queue:
			app := o.app
			if o.note != nil {
				var err error
				if app, err = c.fromEngine(*o.note); err != nil {
					c.opts.Log.Info("notification not evaluated", "app", o.note.Key.String(), "error", err.Error())
					c.pending.Add(-1)
					continue
				}
			}
			c.evaluate(ctx, app)
			c.pending.Add(-1)
		}
	}
}

// Idle reports whether every change observed so far has been evaluated
// and every delivery it caused has finished (sent or given up).
func (c *Controller) Idle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending.Load() == 0 && len(c.inflight) == 0
}

// evaluate runs the triggers app is subscribed to and queues what is due.
func (c *Controller) evaluate(ctx context.Context, app map[string]any) {
	cfg := c.cfg.Load()
	id := appID(app)
	c.mu.Lock()
	if r := c.retrying[id]; r != nil {
		r.app = app // the retry evaluates the newest state
	}
	c.mu.Unlock()
	subs, err := cfg.Subscriptions(app)
	if err != nil {
		c.opts.Log.Info("bad subscription", "app", id, "error", err.Error())
	}
	if len(subs) == 0 {
		return
	}
	env := cfg.Env(app)
	for _, trigger := range sortedKeys(subs) {
		t := cfg.triggers[trigger]
		matched := false
		for _, r := range t.Evaluate(env) {
			matched = matched || r.Matched
			for _, to := range subs[trigger] {
				c.due(ctx, cfg, app, id, trigger, r, to)
			}
		}
		c.metrics.evaluations.WithLabelValues(trigger, fmt.Sprint(matched)).Inc()
	}
}

// due decides whether condition r of trigger sends to `to`, and queues the
// deliveries. The state key is the app's "namespace/name", "|", and Argo
// CD's key of the condition and destination (StateKey). As in Argo CD, a
// condition that matches sends unless its key is recorded; one that does
// not match forgets its key only when it has no oncePer: a oncePer key
// (a revision, say) is kept, so a value is sent once for good, and a
// self-heal sync of the same revision sends nothing again.
func (c *Controller) due(ctx context.Context, cfg *Config, app map[string]any, id, trigger string, r ConditionResult, to Destination) {
	key := id + "|" + StateKey(trigger, r, to)
	if !r.Matched {
		if r.OncePer != "" {
			return
		}
		if err := c.opts.State.SetNotified(ctx, key, false); err != nil {
			c.opts.Log.Info("notification state", "error", cfg.Redact(err.Error()))
		}
		return
	}
	c.mu.Lock()
	busy := c.inflight[key] > 0
	c.mu.Unlock()
	if busy {
		return
	}
	sent, err := c.opts.State.Notified(ctx, key)
	if err != nil {
		// Unknown is not "not sent": skip rather than risk a duplicate;
		// the next change of the app tries again.
		c.opts.Log.Info("notification state", "error", cfg.Redact(err.Error()))
		return
	}
	if sent {
		return
	}
	msg, err := cfg.RenderAll(r.Send, app, to)
	if err != nil {
		// As in Argo CD, a notification that does not render is a failed
		// delivery: not recorded, tried again.
		c.failed(cfg, delivery{key: key, app: app, trigger: trigger, to: to, msg: Message{Template: strings.Join(r.Send, ",")}}, err)
		return
	}
	msg.Trigger = trigger
	c.mu.Lock()
	c.inflight[key]++
	c.mu.Unlock()
	select {
	case c.sends <- delivery{key: key, app: app, trigger: trigger, to: to, msg: msg}:
	case <-ctx.Done():
	}
}

// deliver sends d (attempting Retry.Steps times) and records it as sent
// once it is delivered, never before. A failed delivery is not recorded,
// so that the next evaluation that finds it still due (RetryAfter, or the
// next change) sends it again.
func (c *Controller) deliver(ctx context.Context, d delivery) {
	defer func() {
		c.mu.Lock()
		if c.inflight[d.key]--; c.inflight[d.key] <= 0 {
			delete(c.inflight, d.key)
		}
		c.mu.Unlock()
	}()
	cfg := c.cfg.Load()
	svc, ok := cfg.services[d.to.Service]
	var err error
	if !ok {
		err = &UnknownError{Kind: "service", Name: d.to.Service}
	} else {
		err = c.retry(ctx, func(ctx context.Context) error { return svc.svc.Send(ctx, d.msg, d.to) })
	}
	if err != nil {
		if ctx.Err() == nil {
			c.failed(cfg, d, err)
		}
		return
	}
	c.metrics.sent.WithLabelValues(d.trigger, d.to.Service).Inc()
	// Recorded even when the controller is stopping (Run waits for its
	// workers): a notification delivered and not recorded would be sent
	// again by the next instance.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.SendTimeout)
	defer cancel()
	if err := c.opts.State.SetNotified(rctx, d.key, true); err != nil {
		c.opts.Log.Info("notification sent but not recorded: it may be sent again", "app", appID(d.app), "error", cfg.Redact(err.Error()))
	}
}

// failed counts, logs and reports a delivery that failed, and has its
// Application evaluated again after RetryAfter. As notifications-engine
// decides, one failure is not tried again: GitHub's refusal of more commit
// statuses for a commit, which is recorded as sent (and reported) so that
// it is not sent again for ever.
func (c *Controller) failed(cfg *Config, d delivery, err error) {
	c.metrics.failed.WithLabelValues(d.trigger, d.to.Service).Inc()
	derr := &DeliveryError{Trigger: d.trigger, Template: d.msg.Template, Destination: d.to, Err: errors.New(cfg.Redact(err.Error()))}
	c.opts.Log.Info("notification not delivered", "app", appID(d.app), "error", derr.Error())
	if retryable(err) {
		c.retryLater(d.app)
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.SendTimeout)
		if err := c.opts.State.SetNotified(ctx, d.key, true); err != nil {
			c.opts.Log.Info("notification state", "error", cfg.Redact(err.Error()))
		}
		cancel()
	}
	if c.opts.OnFailure != nil {
		c.opts.OnFailure(appKey(d.app), derr)
	}
}

// retryLater evaluates app again after RetryAfter (from the newest state
// observed of it by then), unless that is already planned.
func (c *Controller) retryLater(app map[string]any) {
	id := appID(app)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped || c.retrying[id] != nil {
		return
	}
	r := &retry{app: app}
	r.timer = time.AfterFunc(c.opts.RetryAfter, func() {
		c.mu.Lock()
		latest := r.app
		if c.retrying[id] == r {
			delete(c.retrying, id)
		}
		stopped := c.stopped
		c.mu.Unlock()
		if !stopped {
			c.enqueue(observation{app: latest})
		}
	})
	c.retrying[id] = r
}

// stopRetries cancels the planned evaluations when Run ends.
func (c *Controller) stopRetries() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	for id, r := range c.retrying {
		r.timer.Stop()
		delete(c.retrying, id)
	}
}

// retry runs send up to Retry.Steps times, waiting Retry's next step
// between tries.
func (c *Controller) retry(ctx context.Context, send func(context.Context) error) error {
	b := c.opts.Retry // a copy: Step advances it
	attempts := b.Steps
	var err error
	for attempt := 1; ; attempt++ {
		// An attempt under way when the controller stops completes (within
		// SendTimeout), so that what a receiver got is recorded as sent;
		// no attempt starts after the stop.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.SendTimeout)
		err = send(actx)
		cancel()
		if err == nil || attempt >= attempts {
			return err
		}
		t := time.NewTimer(b.Step())
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// appID is "namespace/name" of an Application map.
func appID(app map[string]any) string {
	k := appKey(app)
	return k.Namespace + "/" + k.Name
}

// appKey is the key of an Application map.
func appKey(app map[string]any) v1alpha1.AppKey {
	meta, _ := app["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	return v1alpha1.AppKey{Namespace: ns, Name: name}
}
