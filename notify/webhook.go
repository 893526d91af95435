package notify

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// webhookConfig is service.webhook.<name>, as Argo CD writes it.
type webhookConfig struct {
	URL     string `json:"url"`
	Headers []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"headers,omitempty"`
	BasicAuth *struct {
		Username string `json:"username"`
		Password string `json:"password"`
	} `json:"basicAuth,omitempty"`
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// webhook sends a template's webhook.<name> block as an HTTP request to
// the service's URL (with the block's path appended), with its headers and
// basic auth. Any status but 2xx is a failure.
type webhook struct {
	name   string
	cfg    webhookConfig
	client *http.Client
}

func newWebhook(name string, config map[string]any) (Service, error) {
	var c webhookConfig
	if err := decodeStrict(config, &c); err != nil {
		return nil, err
	}
	if c.URL == "" {
		return nil, fmt.Errorf("no url")
	}
	return &webhook{name: name, cfg: c, client: httpClient(c.InsecureSkipVerify)}, nil
}

// Send implements Service. A message without a block for this service
// sends nothing and says so.
func (w *webhook) Send(ctx context.Context, msg Message, _ Destination) error {
	req, ok := msg.Webhook[w.name]
	if !ok {
		return fmt.Errorf("service %s: template %q has no webhook.%s block", w.name, msg.Template, w.name)
	}
	u := strings.TrimSuffix(w.cfg.URL, "/")
	if req.Path != "" {
		u += "/" + strings.TrimPrefix(req.Path, "/")
	}
	var body io.Reader
	if req.Body != "" {
		body = strings.NewReader(req.Body)
	}
	hr, err := http.NewRequestWithContext(ctx, strings.ToUpper(req.Method), u, body)
	if err != nil {
		return requestError(w.name, err)
	}
	for _, h := range w.cfg.Headers {
		hr.Header.Add(h.Name, h.Value)
	}
	if b := w.cfg.BasicAuth; b != nil {
		hr.SetBasicAuth(b.Username, b.Password)
	}
	resp, err := w.client.Do(hr)
	if err != nil {
		return requestError(w.name, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("service %s: %s: status %d", w.name, hr.Method, resp.StatusCode)
	}
	return nil
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
