package notify

import (
	"context"
	"encoding/json"
	"fmt"
)

// Service delivers a rendered message to one recipient. The built-in
// services are Argo CD's own (ServiceTypes: notifications-engine's); a
// host adds its own (a chat it runs, a ticket system) with
// LoadOptions.ServiceTypes. Send must honour ctx and must not put secrets
// in its errors.
type Service interface {
	Send(ctx context.Context, msg Message, to Destination) error
}

// Destination is where a notification goes: a configured service's name
// (the last part of service.<type>[.<name>]) and a recipient it knows (a
// Slack channel, an email address; unused by webhooks).
type Destination struct {
	// Service is the configured service's name.
	Service string `json:"service"`
	// Recipient is the service's recipient (a channel, an address); empty for
	// webhooks.
	Recipient string `json:"recipient"`
}

// String is "service:recipient", the form of Argo CD's subscriptions.
func (d Destination) String() string { return d.Service + ":" + d.Recipient }

// NewServiceFunc builds a service of one type from its configuration (the
// decoded YAML of service.<type>[.<name>], secret references resolved).
// name is the service's name.
type NewServiceFunc func(name string, config map[string]any) (Service, error)

// redactJSONError keeps a decoding error's field name and drops any value.
func redactJSONError(err error) string {
	switch e := err.(type) {
	case *json.UnmarshalTypeError:
		return fmt.Sprintf("field %s: want %s", e.Field, e.Type)
	}
	return err.Error()
}
