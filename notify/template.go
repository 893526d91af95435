package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// Template is a compiled template.<name> entry: the message and title, and
// the blocks of each service type (email, slack, webhook, and any other a
// host's service reads), each string a Go text/template with sprig's
// functions (without env and expandenv, as in Argo CD).
type Template struct {
	Name string

	message, title *template.Template
	emailSubject   *template.Template
	slack          slackTemplate
	webhook        map[string]webhookTemplate
	other          map[string]map[string]*template.Template
	repo           RepoService // LoadOptions.Repo, for .repo's helpers
}

type slackTemplate struct {
	attachments, blocks, groupingKey *template.Template
	notifyBroadcast                  bool
	deliveryPolicy                   string
}

type webhookTemplate struct {
	method     string
	path, body *template.Template
}

// Message is a template rendered for one destination.
type Message struct {
	// Trigger and Template say what sent it.
	Trigger, Template string
	// Body is the template's message; Title its title.
	Body, Title string
	// EmailSubject is the email block's subject.
	EmailSubject string
	// Slack is the slack block: attachments and blocks as JSON text.
	Slack SlackMessage
	// Webhook are the webhook blocks by service name.
	Webhook map[string]WebhookRequest
	// Fields are the rendered blocks of other service types, by type and
	// field, for a host's Service.
	Fields map[string]map[string]string
}

// SlackMessage is the slack block of a template. DeliveryPolicy is Post
// (the default), PostAndUpdate or Update.
type SlackMessage struct {
	Attachments, Blocks, GroupingKey string
	NotifyBroadcast                  bool
	DeliveryPolicy                   string
}

// WebhookRequest is one webhook block: the method (default GET, as in
// Argo CD), the path appended to the service's URL, and the body.
type WebhookRequest struct {
	Method, Path, Body string
}

// templateFuncs are sprig's functions without those that read the
// process's environment.
func templateFuncs() template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	return f
}

// parseTemplate compiles a template.<name> value.
func parseTemplate(name, src string, funcs template.FuncMap) (*Template, error) {
	var raw map[string]any
	if err := yaml.Unmarshal([]byte(src), &raw); err != nil {
		return nil, fmt.Errorf("not YAML: %w", err)
	}
	t := &Template{Name: name}
	parse := func(field string, v any) (*template.Template, error) {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want a string, got %T", field, v)
		}
		p, err := template.New(field).Funcs(funcs).Parse(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		return p, nil
	}
	fields := func(block string, v any, allowed ...string) (map[string]any, error) {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want a map, got %T", block, v)
		}
		if allowed != nil {
			for k := range m {
				if !contains(allowed, k) {
					return nil, fmt.Errorf("%s.%s is not supported (known: %v)", block, k, allowed)
				}
			}
		}
		return m, nil
	}
	var err error
	for _, k := range sortedKeys(raw) {
		v := raw[k]
		switch k {
		case "message":
			t.message, err = parse(k, v)
		case "title":
			t.title, err = parse(k, v)
		case "email":
			var m map[string]any
			if m, err = fields(k, v, "subject"); err == nil && m["subject"] != nil {
				t.emailSubject, err = parse("email.subject", m["subject"])
			}
		case "slack":
			t.slack, err = parseSlackTemplate(v, fields, parse)
		case "webhook":
			t.webhook, err = parseWebhookTemplates(v, fields, parse)
		default:
			var m map[string]any
			if m, err = fields(k, v); err != nil {
				break
			}
			if t.other == nil {
				t.other = map[string]map[string]*template.Template{}
			}
			t.other[k] = map[string]*template.Template{}
			for _, f := range sortedKeys(m) {
				v := m[f]
				if _, isString := v.(string); !isString {
					// A host service's block may hold lists or maps: it
					// gets them as JSON text, templated like the rest.
					b, jerr := json.Marshal(v)
					if jerr != nil {
						err = fmt.Errorf("%s.%s: %w", k, f, jerr)
						break
					}
					v = string(b)
				}
				if t.other[k][f], err = parse(k+"."+f, v); err != nil {
					break
				}
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

type fieldsFunc func(block string, v any, allowed ...string) (map[string]any, error)
type parseFunc func(field string, v any) (*template.Template, error)

func parseSlackTemplate(v any, fields fieldsFunc, parse parseFunc) (slackTemplate, error) {
	var s slackTemplate
	m, err := fields("slack", v, "attachments", "blocks", "groupingKey", "notifyBroadcast", "deliveryPolicy")
	if err != nil {
		return s, err
	}
	for _, f := range []struct {
		name string
		dst  **template.Template
	}{{"attachments", &s.attachments}, {"blocks", &s.blocks}, {"groupingKey", &s.groupingKey}} {
		if m[f.name] != nil {
			if *f.dst, err = parse("slack."+f.name, m[f.name]); err != nil {
				return s, err
			}
		}
	}
	if p, ok := m["deliveryPolicy"]; ok {
		s.deliveryPolicy, _ = p.(string)
		switch s.deliveryPolicy {
		case "Post", "PostAndUpdate", "Update":
		default:
			return s, fmt.Errorf("slack.deliveryPolicy: %v is not Post, PostAndUpdate or Update", p)
		}
	}
	if b, ok := m["notifyBroadcast"]; ok {
		if s.notifyBroadcast, ok = b.(bool); !ok {
			return s, fmt.Errorf("slack.notifyBroadcast: want a boolean, got %T", b)
		}
	}
	return s, nil
}

func parseWebhookTemplates(v any, fields fieldsFunc, parse parseFunc) (map[string]webhookTemplate, error) {
	services, err := fields("webhook", v)
	if err != nil {
		return nil, err
	}
	out := map[string]webhookTemplate{}
	for _, svc := range sortedKeys(services) {
		m, err := fields("webhook."+svc, services[svc], "method", "path", "body")
		if err != nil {
			return nil, err
		}
		var w webhookTemplate
		if mv, ok := m["method"]; ok {
			if w.method, ok = mv.(string); !ok {
				return nil, fmt.Errorf("webhook.%s.method: want a string, got %T", svc, mv)
			}
		}
		for _, f := range []struct {
			name string
			dst  **template.Template
		}{{"path", &w.path}, {"body", &w.body}} {
			if m[f.name] != nil {
				if *f.dst, err = parse("webhook."+svc+"."+f.name, m[f.name]); err != nil {
					return nil, err
				}
			}
		}
		out[svc] = w
	}
	return out, nil
}

// Render renders the template for one destination of service type
// serviceType. Its data are those of Argo CD: .app, .context,
// .serviceType, .recipient, and the helpers .time, .repo, .strings and
// .sync.
func (t *Template) Render(app map[string]any, context map[string]string, serviceType, recipient string) (Message, error) {
	data := templateHelpers(app, t.repo)
	data["app"], data["context"], data["serviceType"], data["recipient"] = app, context, serviceType, recipient
	var buf bytes.Buffer
	var firstErr error
	exec := func(p *template.Template) string {
		if p == nil || firstErr != nil {
			return ""
		}
		buf.Reset()
		if err := p.Execute(&buf, data); err != nil {
			firstErr = fmt.Errorf("template %q: %w", t.Name, err)
			return ""
		}
		return buf.String()
	}
	m := Message{Template: t.Name, Body: exec(t.message), Title: exec(t.title), EmailSubject: exec(t.emailSubject),
		Slack: SlackMessage{Attachments: exec(t.slack.attachments), Blocks: exec(t.slack.blocks),
			GroupingKey: exec(t.slack.groupingKey), NotifyBroadcast: t.slack.notifyBroadcast, DeliveryPolicy: t.slack.deliveryPolicy}}
	for _, name := range sortedKeys(t.webhook) {
		w := t.webhook[name]
		if m.Webhook == nil {
			m.Webhook = map[string]WebhookRequest{}
		}
		method := w.method
		if method == "" {
			method = "GET"
		}
		m.Webhook[name] = WebhookRequest{Method: method, Path: exec(w.path), Body: exec(w.body)}
	}
	for _, typ := range sortedKeys(t.other) {
		if m.Fields == nil {
			m.Fields = map[string]map[string]string{}
		}
		m.Fields[typ] = map[string]string{}
		for _, f := range sortedKeys(t.other[typ]) {
			m.Fields[typ][f] = exec(t.other[typ][f])
		}
	}
	if firstErr != nil {
		return Message{}, firstErr
	}
	return m, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
