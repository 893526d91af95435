package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Service delivers a rendered message to one recipient. The built-in
// services are webhook, slack and email; a host adds its own (a chat it
// runs, a ticket system) with LoadOptions.ServiceTypes. Send must honour
// ctx and must not put secrets in its errors.
type Service interface {
	Send(ctx context.Context, msg Message, to Destination) error
}

// Destination is where a notification goes: a configured service's name
// (the last part of service.<type>[.<name>]) and a recipient it knows (a
// Slack channel, an email address; unused by webhooks).
type Destination struct {
	Service   string `json:"service"`
	Recipient string `json:"recipient"`
}

// String is "service:recipient", the form of Argo CD's subscriptions.
func (d Destination) String() string { return d.Service + ":" + d.Recipient }

// NewServiceFunc builds a service of one type from its configuration (the
// decoded YAML of service.<type>[.<name>], secret references resolved).
// name is the service's name.
type NewServiceFunc func(name string, config map[string]any) (Service, error)

// builtinServices are the service types this package implements.
func builtinServices() map[string]NewServiceFunc {
	return map[string]NewServiceFunc{"webhook": newWebhook, "slack": newSlack, "email": newEmail}
}

// decodeStrict decodes a service's configuration into out, refusing fields
// out does not have (an Argo CD option this package does not implement is
// an error, not a silent no-op).
func decodeStrict(config map[string]any, out any) error {
	b, err := json.Marshal(config)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytesReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%s", redactJSONError(err))
	}
	return nil
}

// redactJSONError keeps a decoding error's field name and drops any value.
func redactJSONError(err error) string {
	switch e := err.(type) {
	case *json.UnmarshalTypeError:
		return fmt.Sprintf("field %s: want %s", e.Field, e.Type)
	}
	return err.Error()
}

// sendTimeout bounds one request of a built-in service.
const sendTimeout = 15 * time.Second

// httpClient is the client of the built-in HTTP services.
func httpClient(insecure bool) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if insecure {
		tr.TLSClientConfig.InsecureSkipVerify = true
	}
	return &http.Client{Transport: tr, Timeout: sendTimeout}
}

// requestError drops the URL from an HTTP client's error (a Slack webhook
// URL is a secret) and keeps what went wrong.
func requestError(service string, err error) error {
	if ue, ok := err.(*url.Error); ok {
		return fmt.Errorf("service %s: %s: %w", service, ue.Op, ue.Err)
	}
	return fmt.Errorf("service %s: %w", service, err)
}
