package notify

import (
	"fmt"
	"strings"
)

// ConfigError reports a bad entry of argocd-notifications-cm (or of its
// secret): Kind is "trigger", "template", "service", "subscription" or
// "key", Name the entry's name (the part after "trigger.", "template.",
// "service."). Its message never holds a secret value.
type ConfigError struct {
	// Kind is the kind of entry: trigger, template, service, subscription or
	// key.
	Kind string
	// Name is the entry's name.
	Name string
	// Err says what is wrong with it.
	Err error
}

// Error implements error.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("notifications config: %s %q: %v", e.Kind, e.Name, e.Err)
}

// Unwrap returns the cause.
func (e *ConfigError) Unwrap() error { return e.Err }

// MissingSecretError reports a "$key" reference of a service to a key that
// argocd-notifications-secret does not have.
type MissingSecretError struct {
	// Service names the service whose configuration refers to Key.
	Service string
	// Key is the secret key, without "$".
	Key string
}

// Error implements error.
func (e *MissingSecretError) Error() string {
	return fmt.Sprintf("service %q refers to $%s, which argocd-notifications-secret does not have", e.Service, e.Key)
}

// UnknownError reports a name that the configuration does not define: a
// trigger's template, a subscription's trigger or service, or a trigger or
// template asked for by name.
type UnknownError struct {
	// Kind is "trigger", "template" or "service".
	Kind string
	// Name is the name that was not found.
	Name string
	// By says who referred to it ("trigger on-x", "annotation k"), if anyone.
	By string
}

// Error implements error.
func (e *UnknownError) Error() string {
	if e.By == "" {
		return fmt.Sprintf("no %s %q is configured", e.Kind, e.Name)
	}
	return fmt.Sprintf("%s: no %s %q is configured", e.By, e.Kind, e.Name)
}

// DeliveryError reports a notification that a service did not deliver.
// Its message is redacted: no secret of the configuration appears in it.
type DeliveryError struct {
	// Trigger and Template are the trigger that fired and the template
	// rendered.
	Trigger, Template string
	// Destination is where the notification was to go.
	Destination Destination
	// Err is the service's error, redacted.
	Err error
}

// Error implements error.
func (e *DeliveryError) Error() string {
	return fmt.Sprintf("notification %s/%s to %s: %v", e.Trigger, e.Template, e.Destination, e.Err)
}

// Unwrap returns the cause.
func (e *DeliveryError) Unwrap() error { return e.Err }

// SkippedError reports the triggers Load left out of a Config it returned
// (a trigger that does not parse or compile, or sends a template that does
// not exist), as Argo CD logs and skips them. errors.As finds each
// *ConfigError in it.
type SkippedError struct {
	// Entries name each skipped trigger and why.
	Entries []*ConfigError
}

// Error implements error.
func (e *SkippedError) Error() string {
	msgs := make([]string, len(e.Entries))
	for i, c := range e.Entries {
		msgs[i] = c.Error()
	}
	return fmt.Sprintf("%d trigger(s) skipped: %s", len(e.Entries), strings.Join(msgs, "; "))
}

// Unwrap returns the entries.
func (e *SkippedError) Unwrap() []error {
	out := make([]error, len(e.Entries))
	for i, c := range e.Entries {
		out[i] = c
	}
	return out
}
