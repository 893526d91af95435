package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/argoproj/notifications-engine/pkg/services"
	"sigs.k8s.io/yaml"
)

// Template is a compiled template.<name> entry, read as Argo CD's
// notifications-engine reads it: message and a block per service type
// (services.Notification: email, slack, mattermost, rocketchat, teams,
// teams-workflows, webhook.<service name>, opsgenie, github, alertmanager,
// googlechat, pagerduty, pagerdutyv2, newrelic, awssqs, gcppubsub), each
// string a Go text/template with sprig's functions (without env and
// expandenv, as in Argo CD). Two more things are this package's own, for a
// host's Service: title, and any other block (a map), rendered field by
// field into Message.Fields.
type Template struct {
	// Name is the template's name (the part after "template.").
	Name string

	// src is the services.Notification part as JSON. Each render compiles
	// it afresh: some of notifications-engine's templaters (alertmanager's
	// labels and annotations, awssqs's message attributes) write what they
	// render into the template they were made from, so one compiled
	// templater would send its first rendering for ever.
	src     []byte
	funcs   template.FuncMap
	title   *template.Template
	other   map[string]map[string]*template.Template
	repo    RepoService // LoadOptions.Repo, for .repo's helpers
	ignored []string    // fields Argo CD ignores, named for a warning
}

// Message is what the templates of one send rendered for one destination.
type Message struct {
	// Trigger and Template say what sent it (Template names every
	// template of the send, joined by ",").
	Trigger, Template string
	// Notification is the rendered notification, as notifications-engine's
	// services take it: the message and each service block. Several
	// templates of one send render into one notification, in order, as
	// Argo CD's do.
	Notification services.Notification
	// Title is the template's title (this package's own field, for a
	// host's Service; Argo CD has none).
	Title string
	// Fields are the rendered blocks of other service types, by type and
	// field, for a host's Service.
	Fields map[string]map[string]string
}

// templateFuncs are sprig's functions without those that read the
// process's environment.
func templateFuncs() template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	return f
}

// argoBlocks are the blocks of services.Notification by their key, with
// the type of each (message excluded).
var argoBlocks = func() map[string]reflect.Type {
	out := map[string]reflect.Type{}
	t := reflect.TypeOf(services.Notification{})
	for i := 0; i < t.NumField(); i++ {
		name := jsonName(t.Field(i))
		if name != "" && name != "message" {
			out[name] = t.Field(i).Type
		}
	}
	return out
}()

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
	argo := map[string]any{}
	for _, k := range sortedKeys(raw) {
		v := raw[k]
		switch _, known := argoBlocks[k]; {
		case k == "message" || known:
			argo[k] = v
			if known {
				t.ignored = append(t.ignored, unknownFields(k, argoBlocks[k], v)...)
			}
		case k == "title":
			var err error
			if t.title, err = parse(k, v); err != nil {
				return nil, err
			}
		default:
			m, ok := v.(map[string]any)
			if !ok {
				t.ignored = append(t.ignored, k)
				continue
			}
			if err := t.parseOther(k, m, parse); err != nil {
				return nil, err
			}
		}
	}
	b, err := json.Marshal(argo)
	if err != nil {
		return nil, err
	}
	t.src, t.funcs = b, funcs
	// Compile once now, so that a template that does not decode or parse
	// is refused at load.
	if _, err := t.compile(); err != nil {
		return nil, err
	}
	return t, nil
}

// parseOther compiles a block of a type notifications-engine does not
// know, for a host's service.
func (t *Template) parseOther(block string, m map[string]any, parse func(string, any) (*template.Template, error)) error {
	if t.other == nil {
		t.other = map[string]map[string]*template.Template{}
	}
	t.other[block] = map[string]*template.Template{}
	for _, f := range sortedKeys(m) {
		v := m[f]
		if _, isString := v.(string); !isString {
			// A host service's block may hold lists or maps: it gets them
			// as JSON text, templated like the rest.
			b, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("%s.%s: %w", block, f, err)
			}
			v = string(b)
		}
		p, err := parse(block+"."+f, v)
		if err != nil {
			return err
		}
		t.other[block][f] = p
	}
	return nil
}

// compile decodes the template's notification and compiles its templater.
func (t *Template) compile() (services.Templater, error) {
	var n services.Notification
	if err := json.Unmarshal(t.src, &n); err != nil {
		return nil, fmt.Errorf("%s", redactJSONError(err))
	}
	return n.GetTemplater(t.Name, t.funcs)
}

// Ignored names the template's fields that Argo CD ignores (a field a
// service block does not have, a top-level key that is neither a block nor
// message nor title): the rest of the template works without them.
func (t *Template) Ignored() []string { return append([]string(nil), t.ignored...) }

// Render renders the template for one destination: .app, .context, the
// helpers .time, .repo, .strings and .sync, .recipient and .serviceType,
// which is the destination's service name, as notifications-engine sets it
// (service.webhook.github gives "github").
func (t *Template) Render(app map[string]any, context map[string]string, service, recipient string) (Message, error) {
	msg := Message{Template: t.Name}
	if err := t.renderInto(&msg, templateVars(app, context, service, recipient, t.repo)); err != nil {
		return Message{}, err
	}
	return msg, nil
}

// templateVars are the data every template of a send sees.
func templateVars(app map[string]any, context map[string]string, service, recipient string, repo RepoService) map[string]any {
	vars := templateHelpers(app, repo)
	vars["app"], vars["context"], vars["serviceType"], vars["recipient"] = app, context, service, recipient
	return vars
}

// renderInto renders the template into msg, over what earlier templates of
// the same send rendered there.
func (t *Template) renderInto(msg *Message, vars map[string]any) error {
	templater, err := t.compile()
	if err != nil {
		return fmt.Errorf("template %q: %w", t.Name, err)
	}
	if err := templater(&msg.Notification, vars); err != nil {
		return fmt.Errorf("template %q: %w", t.Name, err)
	}
	var buf bytes.Buffer
	exec := func(p *template.Template) (string, error) {
		buf.Reset()
		if err := p.Execute(&buf, vars); err != nil {
			return "", fmt.Errorf("template %q: %w", t.Name, err)
		}
		return buf.String(), nil
	}
	if t.title != nil {
		if msg.Title, err = exec(t.title); err != nil {
			return err
		}
	}
	for _, typ := range sortedKeys(t.other) {
		if msg.Fields == nil {
			msg.Fields = map[string]map[string]string{}
		}
		if msg.Fields[typ] == nil {
			msg.Fields[typ] = map[string]string{}
		}
		for _, f := range sortedKeys(t.other[typ]) {
			if msg.Fields[typ][f], err = exec(t.other[typ][f]); err != nil {
				return err
			}
		}
	}
	return nil
}

// unknownFields names the fields of a block (decoded YAML v) that its Go
// type typ does not have, "block.field"; webhook blocks are a map of
// service name to block.
func unknownFields(block string, typ reflect.Type, v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() == reflect.Map {
		var out []string
		for _, k := range sortedKeys(m) {
			out = append(out, unknownFields(block+"."+k, typ.Elem(), m[k])...)
		}
		return out
	}
	if typ.Kind() != reflect.Struct {
		return nil
	}
	known := jsonFields(typ)
	var out []string
	for _, k := range sortedKeys(m) {
		if !known[k] {
			out = append(out, block+"."+k)
		}
	}
	return out
}

// jsonFields are the JSON names of a struct's fields, embedded structs'
// included.
func jsonFields(typ reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			for k := range jsonFields(ft) {
				out[k] = true
			}
			continue
		}
		if name := jsonName(f); name != "" {
			out[name] = true
		}
	}
	return out
}

// jsonName is the JSON name of an exported struct field ("" when it has
// none).
func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return ""
	case "":
		return f.Name
	}
	return name
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
