package notify

import (
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/argodocs"
	"sigs.k8s.io/yaml"
)

// servicePagesDir is where Argo CD documents its notification services,
// one page per service type.
const servicePagesDir = "docs/operator-manual/notifications/services"

// docPage is what one service page of Argo CD's docs configures in its
// YAML examples.
type docPage struct {
	name string
	// services are the service.<type>[.<name>] entries of
	// argocd-notifications-cm, every example of each (a page shows some
	// keys several times); templates the template.<name> entries; secret
	// the stringData of the Secret examples.
	services          []docEntry
	templates, secret map[string]string
}

// docEntry is one example of an entry.
type docEntry struct{ key, value string }

// servicePages reads every service page of the release's docs (the
// overview excepted), as Argo CD ships them.
func servicePages(t *testing.T) []docPage {
	t.Helper()
	rel := argodocs.ForTest(t)
	names, err := rel.Glob(servicePagesDir + "/*.md")
	if err != nil || len(names) == 0 {
		t.Fatalf("no service pages in %s: %v", servicePagesDir, err)
	}
	var out []docPage
	for _, name := range names {
		if path.Base(name) == "overview.md" {
			continue
		}
		p := docPage{name: path.Base(name), templates: map[string]string{}, secret: map[string]string{}}
		for _, block := range yamlBlocks(string(rel.MustReadFile(t, name))) {
			p.read(block)
		}
		out = append(out, p)
	}
	return out
}

var fence = regexp.MustCompile("^(\\s*)```\\s*(\\w*)\\s*$")

// yamlBlocks are the page's ```yaml code blocks, each dedented by its
// fence's indentation.
func yamlBlocks(md string) []string {
	var out, cur []string
	indent, inBlock, isYAML := "", false, false
	for _, line := range strings.Split(md, "\n") {
		m := fence.FindStringSubmatch(line)
		switch {
		case m != nil && !inBlock:
			inBlock, isYAML, indent, cur = true, m[2] == "yaml", m[1], nil
		case m != nil && inBlock && strings.TrimSpace(m[2]) == "":
			if isYAML {
				out = append(out, strings.Join(cur, "\n"))
			}
			inBlock = false
		case inBlock:
			cur = append(cur, strings.TrimPrefix(line, indent))
		}
	}
	return out
}

var entryLine = regexp.MustCompile(`^(\s*)((?:service|template)\.[\w.-]+):\s*\|\s*$`)

// read takes the entries of one YAML block: from its data (or its top
// level, where a page shows entries alone or mis-indents them) and its
// stringData; a block that is not valid YAML is read line by line, each
// entry a block scalar.
func (p *docPage) read(block string) {
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
		p.readLines(block)
		return
	}
	for _, m := range []any{doc, doc["data"]} {
		data, _ := m.(map[string]any)
		for _, k := range sortedKeys(data) {
			s, ok := data[k].(string)
			switch {
			case !ok:
			case strings.HasPrefix(k, "service."):
				p.services = append(p.services, docEntry{k, s})
			case strings.HasPrefix(k, "template."):
				p.templates[k] = s
			}
		}
	}
	if sd, ok := doc["stringData"].(map[string]any); ok {
		for k, v := range sd {
			if s, ok := v.(string); ok {
				p.secret[k] = s
			}
		}
	}
}

func (p *docPage) readLines(block string) {
	lines := strings.Split(block, "\n")
	for i := 0; i < len(lines); i++ {
		m := entryLine.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		var body []string
		for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || len(lines[i+1])-len(strings.TrimLeft(lines[i+1], " ")) > len(m[1])) {
			i++
			body = append(body, lines[i])
		}
		value := dedent(body)
		if strings.HasPrefix(m[2], "service.") {
			p.services = append(p.services, docEntry{m[2], value})
		} else {
			p.templates[m[2]] = value
		}
	}
}

// dedent removes the lines' common indentation.
func dedent(lines []string) string {
	min := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, " ")); min < 0 || n < min {
			min = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= min && min > 0 {
			l = l[min:]
		}
		out[i] = l
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n") + "\n"
}

// secretRefs are the "$key" references of the page's service entries.
func (p *docPage) secretRefs() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range p.services {
		for _, ref := range secretRef.FindAllString(e.value, -1) {
			if !seen[ref[1:]] {
				seen[ref[1:]] = true
				out = append(out, ref[1:])
			}
		}
	}
	return out
}

// serviceType is the <type> of a service.<type>[.<name>] key, and name
// its name.
func serviceType(key string) (typ, name string) {
	typ, name, _ = strings.Cut(strings.TrimPrefix(key, "service."), ".")
	if name == "" {
		name = typ
	}
	return typ, name
}
