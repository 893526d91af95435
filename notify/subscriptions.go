package notify

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// Annotations of an Application that subscribe it, as in Argo CD. (Argo
// CD also reads them on AppProjects; this package reads the Application's
// only: a host that wants project-wide subscriptions copies them, or uses
// the ConfigMap's subscriptions with a selector.)
const (
	// SubscribePrefix starts "notifications.argoproj.io/subscribe.<trigger>.<service>:
	// <recipient>[;<recipient>...]" and, without a trigger,
	// "notifications.argoproj.io/subscribe.<service>: <recipients>", which
	// subscribes to the default triggers.
	SubscribePrefix = "notifications.argoproj.io/subscribe."
	// SubscriptionsAnnotation holds a YAML list of
	// {trigger: [names], destinations: [{service, recipients: [...]}]}.
	SubscriptionsAnnotation = "notifications.argoproj.io/subscriptions"
)

// Subscriptions returns the destinations of each trigger that app (an
// Argo-shaped Application map) is subscribed to: its annotations, and the
// ConfigMap's subscriptions whose selector matches its labels. A
// subscription without triggers takes defaultTriggers.<service>, or else
// defaultTriggers. A subscription naming a trigger or service that is not
// configured is an error (the others still count).
func (c *Config) Subscriptions(app map[string]any) (map[string][]Destination, error) {
	out := map[string][]Destination{}
	var errs []string
	add := func(by, trigger, service string, recipients []string) {
		if _, ok := c.services[service]; !ok {
			errs = append(errs, (&UnknownError{Kind: "service", Name: service, By: by}).Error())
			return
		}
		triggers := []string{trigger}
		if trigger == "" {
			triggers = c.defaultTriggersOf(service)
		}
		for _, t := range triggers {
			if _, ok := c.triggers[t]; !ok {
				errs = append(errs, (&UnknownError{Kind: "trigger", Name: t, By: by}).Error())
				continue
			}
			for _, r := range recipients {
				d := Destination{Service: service, Recipient: strings.TrimSpace(r)}
				if !containsDest(out[t], d) {
					out[t] = append(out[t], d)
				}
			}
		}
	}
	meta, _ := app["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	for _, k := range sortedKeys(annotations) {
		v, _ := annotations[k].(string)
		switch {
		case strings.HasPrefix(k, SubscribePrefix):
			rest := strings.TrimPrefix(k, SubscribePrefix)
			trigger, service, ok := strings.Cut(rest, ".")
			if !ok {
				trigger, service = "", rest
			}
			add("annotation "+k, trigger, service, strings.Split(v, ";"))
		case k == SubscriptionsAnnotation:
			var subs []struct {
				Trigger      []string `json:"trigger"`
				Destinations []struct {
					Service    string   `json:"service"`
					Recipients []string `json:"recipients"`
				} `json:"destinations"`
			}
			if err := yaml.UnmarshalStrict([]byte(v), &subs); err != nil {
				errs = append(errs, fmt.Sprintf("annotation %s: %v", k, err))
				continue
			}
			for _, s := range subs {
				for _, d := range s.Destinations {
					recipients := d.Recipients
					if len(recipients) == 0 {
						recipients = []string{""}
					}
					triggers := s.Trigger
					if len(triggers) == 0 {
						triggers = []string{""}
					}
					for _, t := range triggers {
						add("annotation "+k, t, d.Service, recipients)
					}
				}
			}
		}
	}
	lbls := labels.Set{}
	if l, ok := meta["labels"].(map[string]any); ok {
		for k, v := range l {
			lbls[k], _ = v.(string)
		}
	}
	for i, s := range c.subscriptions {
		if s.selector != nil && !s.selector.Matches(lbls) {
			continue
		}
		for _, r := range s.Recipients {
			service, recipient, _ := strings.Cut(r, ":")
			triggers := s.Triggers
			if len(triggers) == 0 {
				triggers = []string{""}
			}
			for _, t := range triggers {
				add(fmt.Sprintf("subscriptions[%d]", i), t, service, []string{recipient})
			}
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("subscriptions: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

func (c *Config) defaultTriggersOf(service string) []string {
	if t, ok := c.byService[service]; ok {
		return t
	}
	return c.defaultTriggers
}

func containsDest(ds []Destination, d Destination) bool {
	for _, e := range ds {
		if e == d {
			return true
		}
	}
	return false
}
