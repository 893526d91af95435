package recipes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops/appstatus"
)

// WebhookOptions configure a Webhook.
type WebhookOptions struct {
	// Timeout bounds one POST. Default 5 s.
	Timeout time.Duration
	// Queue is how many notifications may wait; more are dropped. Default 100.
	Queue int
	// Client sends the requests. Default http.DefaultClient.
	Client *http.Client
	// Log receives failed and dropped posts. Default logr.Discard().
	Log logr.Logger
}

// Webhook posts each appstatus.Notification as JSON to one URL. Notify never
// blocks the engine: notifications wait in a bounded queue for one
// sender, are dropped when it is full, and are never retried.
type Webhook struct {
	url     string
	opts    WebhookOptions
	queue   chan appstatus.Notification
	ctx     context.Context // cancelled by Close
	stop    context.CancelFunc
	dropped atomic.Int64
}

// NewWebhook starts the sender; Close stops it.
func NewWebhook(url string, opts WebhookOptions) *Webhook {
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.Queue <= 0 {
		opts.Queue = 100
	}
	if opts.Client == nil {
		opts.Client = http.DefaultClient
	}
	if opts.Log.GetSink() == nil {
		opts.Log = logr.Discard()
	}
	ctx, stop := context.WithCancel(context.Background())
	w := &Webhook{url: url, opts: opts, queue: make(chan appstatus.Notification, opts.Queue), ctx: ctx, stop: stop}
	go w.send()
	return w
}

// Notify queues n, or drops it when the queue is full. Use it as
// Options.Notify.
func (w *Webhook) Notify(n appstatus.Notification) {
	select {
	case w.queue <- n:
	default:
		w.dropped.Add(1)
		w.opts.Log.Info("webhook queue full: notification dropped", "app", n.Key.String(), "type", n.Type)
	}
}

// Dropped counts the notifications dropped so far.
func (w *Webhook) Dropped() int64 { return w.dropped.Load() }

// Close stops the sender and cancels the POST in flight; queued
// notifications are dropped. Notify after Close only queues.
func (w *Webhook) Close() { w.stop() }

func (w *Webhook) send() {
	for {
		select {
		case <-w.ctx.Done():
			return
		case n := <-w.queue:
			if err := w.post(n); err != nil {
				w.opts.Log.Error(err, "webhook post failed", "app", n.Key.String(), "type", n.Type)
			}
		}
	}
}

func (w *Webhook) post(n appstatus.Notification) error {
	body, err := json.Marshal(n)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.opts.Client.Do(req)
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err // without the URL: webhook URLs often hold a token
	}
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook answered %s", resp.Status)
	}
	return nil
}
