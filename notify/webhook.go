package notify

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"
	httputil "github.com/argoproj/notifications-engine/pkg/util/http"
	"github.com/hashicorp/go-retryablehttp"
)

// webhook is Argo CD's webhook service (service.webhook.<name>) with
// notifications-engine's semantics: a request to the service's url, GET
// with the notification's message as its body unless the template has a
// webhook.<name> block, whose method (default GET), path (appended to the
// url) and body replace them; the service's headers and basic auth;
// retried on a network error or a 5xx status retryMax times (default 3),
// waiting between retryWaitMin (1 s) and retryWaitMax (5 s); any status but
// 2xx a failure. It is this package's own code rather than
// notifications-engine's service because that one logs every request's URL
// and every failure to the process's standard error, where a URL's secret
// (a token in its path or query) would show: this one logs nothing.
type webhook struct {
	name   string
	opts   services.WebhookOptions
	client *retryablehttp.Client
}

func newWebhook(name string, opts services.WebhookOptions) *webhook {
	if opts.RetryWaitMin == 0 {
		opts.RetryWaitMin = time.Second
	}
	if opts.RetryWaitMax == 0 {
		opts.RetryWaitMax = 5 * time.Second
	}
	if opts.RetryMax == 0 {
		opts.RetryMax = 3
	}
	client := retryablehttp.NewClient()
	client.HTTPClient = &http.Client{Transport: httputil.NewTransport(opts.TransportOptions, opts.URL, opts.InsecureSkipVerify)}
	client.RetryWaitMin, client.RetryWaitMax, client.RetryMax = opts.RetryWaitMin, opts.RetryWaitMax, opts.RetryMax
	client.Logger = nil
	return &webhook{name: name, opts: opts, client: client}
}

// Send implements services.NotificationService.
func (w *webhook) Send(n services.Notification, to services.Destination) error {
	return w.send(context.Background(), n, to)
}

func (w *webhook) send(ctx context.Context, n services.Notification, to services.Destination) error {
	method, url, body := http.MethodGet, w.opts.URL, n.Message
	if block, ok := n.Webhook[to.Service]; ok {
		body = block.Body
		if block.Method != "" {
			method = block.Method
		}
		if block.Path != "" {
			url = strings.TrimRight(url, "/") + "/" + strings.TrimLeft(block.Path, "/")
		}
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, method, url, bytes.NewBufferString(body))
	if err != nil {
		return err
	}
	for _, h := range w.opts.Headers {
		req.Header.Set(h.Name, h.Value)
	}
	if b := w.opts.BasicAuth; b != nil {
		req.SetBasicAuth(b.Username, b.Password)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return fmt.Errorf("request %s %s has failed with error code %d: %s", method, url, resp.StatusCode, data)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return nil
}
