package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"
	"sigs.k8s.io/yaml"
)

// argoOptions are the option types of the service types Argo CD's
// notifications-engine implements, by the <type> of
// service.<type>[.<name>]: what this package delivers with.
var argoOptions = map[string]any{
	"alertmanager":    services.AlertmanagerOptions{},
	"awssqs":          services.AwsSqsOptions{},
	"email":           services.EmailOptions{},
	"gcppubsub":       services.GcpPubsubOptions{},
	"github":          services.GitHubOptions{},
	"googlechat":      services.GoogleChatOptions{},
	"grafana":         services.GrafanaOptions{},
	"mattermost":      services.MattermostOptions{},
	"nats":            services.NatsOptions{},
	"newrelic":        services.NewrelicOptions{},
	"opsgenie":        services.OpsgenieOptions{},
	"pagerduty":       services.PagerDutyOptions{},
	"pagerdutyv2":     services.PagerDutyV2Options{},
	"pushover":        services.PushoverOptions{},
	"rocketchat":      services.RocketChatOptions{},
	"slack":           services.SlackOptions{},
	"teams":           services.TeamsOptions{},
	"teams-workflows": services.TeamsWorkflowsOptions{},
	"telegram":        services.TelegramOptions{},
	"webex":           services.WebexOptions{},
	"webhook":         services.WebhookOptions{},
}

// ServiceTypes returns the built-in service types, sorted: every type
// Argo CD documents, delivered by Argo CD's notifications-engine.
func ServiceTypes() []string {
	out := make([]string, 0, len(argoOptions))
	for k := range argoOptions {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// argoSendsInFlight bounds the sends of one service still running,
// counting those given up on at their deadline: notifications-engine's
// services take no context, so a send past its deadline runs on until the
// service's own I/O ends, and a service that hangs must not pile them up.
const argoSendsInFlight = 8

// argoService is a service of one of Argo CD's types:
// notifications-engine's NotificationService for it, behind this
// package's Service (a context, a bound on sends in flight, a panic of the
// service an error).
type argoService struct {
	typ, name string
	svc       services.NotificationService
	slots     chan struct{}
	// check runs before each send: an error fails the send where the
	// service would end the process (awssqs's configuration).
	check func(ctx context.Context) error
}

// newArgoService builds the service typ called name from its
// configuration (secret references resolved), and names the fields of the
// configuration that typ does not have (notifications-engine ignores
// them).
func newArgoService(typ, name string, config map[string]any) (*argoService, []string, error) {
	config = normaliseOptions(typ, config)
	ignored := unknownOptions(typ, config)
	b, err := json.Marshal(config)
	if err != nil {
		return nil, nil, err
	}
	var svc services.NotificationService
	if typ == "webhook" {
		var opts services.WebhookOptions
		if err = yaml.Unmarshal(b, &opts); err == nil {
			svc = newWebhook(name, opts)
		}
	} else {
		svc, err = services.NewService(typ, b)
	}
	if err != nil {
		return nil, nil, err
	}
	s := &argoService{typ: typ, name: name, svc: svc, slots: make(chan struct{}, argoSendsInFlight)}
	if typ == "awssqs" {
		var opts services.AwsSqsOptions
		if err := json.Unmarshal(b, &opts); err != nil {
			return nil, nil, err
		}
		s.check = func(ctx context.Context) error { return checkAWSConfig(ctx, opts) }
	}
	return s, ignored, nil
}

// normaliseOptions takes the webhook's retryWaitMin and retryWaitMax as
// Argo CD's docs write them, durations ("1s"), as well as the nanoseconds
// notifications-engine decodes.
func normaliseOptions(typ string, config map[string]any) map[string]any {
	if typ != "webhook" {
		return config
	}
	out := make(map[string]any, len(config))
	for k, v := range config {
		if s, ok := v.(string); ok && (k == "retryWaitMin" || k == "retryWaitMax") {
			if d, err := time.ParseDuration(s); err == nil {
				v = int64(d)
			}
		}
		out[k] = v
	}
	return out
}

// unknownOptions names the top-level fields of config that typ's options
// do not have.
func unknownOptions(typ string, config map[string]any) []string {
	known := jsonFields(reflect.TypeOf(argoOptions[typ]))
	var out []string
	for _, k := range sortedKeys(config) {
		if !known[k] {
			out = append(out, k)
		}
	}
	return out
}

// Send implements Service: it sends msg.Notification with
// notifications-engine's service, which retries as Argo CD's does (the
// webhook's retryMax, say), and gives up waiting when ctx ends.
func (s *argoService) Send(ctx context.Context, msg Message, to Destination) error {
	if s.check != nil {
		if err := s.check(ctx); err != nil {
			return fmt.Errorf("service %s: %w", s.name, err)
		}
	}
	if w, ok := s.svc.(*webhook); ok { // honours ctx itself
		if err := w.send(ctx, msg.Notification, services.Destination{Service: to.Service, Recipient: to.Recipient}); err != nil {
			return &SendError{Service: s.name, Type: s.typ, Err: err}
		}
		return nil
	}
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("service %s: %d earlier sends are still running: %w", s.name, cap(s.slots), ctx.Err())
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-s.slots }()
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("the %s service panicked: %v", s.typ, r)
			}
		}()
		done <- s.svc.Send(msg.Notification, services.Destination{Service: to.Service, Recipient: to.Recipient})
	}()
	select {
	case err := <-done:
		if err != nil {
			return &SendError{Service: s.name, Type: s.typ, Err: err}
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("service %s: no answer in time: %w", s.name, ctx.Err())
	}
}

// SendError is a failure of a built-in service's send, as
// notifications-engine's service reported it.
type SendError struct {
	// Service is the service's name, Type its type.
	Service, Type string
	// Err is the service's error.
	Err error
}

// Error implements error.
func (e *SendError) Error() string { return fmt.Sprintf("service %s: %v", e.Service, e.Err) }

// Unwrap returns the service's error.
func (e *SendError) Unwrap() error { return e.Err }

// retryable reports whether a failed send is tried again at the next
// evaluation, as notifications-engine's HandleSendError decides: every
// failure but GitHub's refusal of more commit statuses for a commit, which
// no retry can change.
func retryable(err error) bool {
	var tooMany *services.TooManyGitHubCommitStatusesError
	return !errors.As(err, &tooMany)
}
