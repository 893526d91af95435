package hydrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"

	"github.com/kubegitops/gitops/source"
)

// DefaultCommitMessageTemplate is Argo CD's default of argocd-cm's
// sourceHydrator.commitMessageTemplate. Its data is {"metadata": the
// root's Metadata as JSON}.
const DefaultCommitMessageTemplate = `{{.metadata.drySha | trunc 7}}: {{ .metadata.subject }}
{{- if .metadata.body }}

{{ .metadata.body }}
{{- end }}
{{ range $ref := .metadata.references }}
{{- if and $ref.commit $ref.commit.author }}
Co-authored-by: {{ $ref.commit.author }}
{{- end }}
{{- end }}
{{- if .metadata.author }}
Co-authored-by: {{ .metadata.author }}
{{- end }}
`

// DefaultReadmeTemplate is Argo CD's default of argocd-cm's
// sourceHydrator.readmeMessageTemplate, over a path's Metadata.
const DefaultReadmeTemplate = "# Manifest Hydration\n\n" +
	"To hydrate the manifests in this repository, run the following commands:\n\n" +
	"```shell\n" +
	`git clone {{ .RepoURL }}
# cd into the cloned directory
git checkout {{ .DrySHA }}
{{ range $command := .Commands -}}
{{ $command }}
{{ end -}}` + "```" + `
{{ if .References -}}

## References

{{ range $ref := .References -}}
{{ if $ref.Commit -}}
* [{{ $ref.Commit.SHA | mustRegexFind "[0-9a-f]+" | trunc 7 }}]({{ $ref.Commit.RepoURL }}): {{ $ref.Commit.Subject }} ({{ $ref.Commit.Author }})
{{ end -}}
{{ end -}}
{{ end -}}`

// The default author of hydrated commits, as Argo CD's commit server signs
// them when argocd-cm sets no commit.author.name or commit.author.email.
const (
	DefaultAuthorName  = "Argo CD"
	DefaultAuthorEmail = "argo-cd@example.com"
)

// funcs are sprig's generic functions without those that read the host's
// environment or resolve names, as Argo CD removes them.
func funcs() template.FuncMap {
	m := sprig.GenericFuncMap()
	delete(m, "env")
	delete(m, "expandenv")
	delete(m, "getHostByName")
	return template.FuncMap(m)
}

// parseTemplate parses text as a template named what, with funcs.
func parseTemplate(what, text string) (*template.Template, error) {
	t, err := template.New(what).Funcs(funcs()).Parse(text)
	if err != nil {
		return nil, &TemplateError{Template: what, Err: err}
	}
	return t, nil
}

// TemplateError is a commit message or README template that does not
// parse or execute.
type TemplateError struct {
	// Template is the argocd-cm key of the template.
	Template string
	// Err is the parse or execution error.
	Err error
}

// Error names the template's key and what went wrong.
func (e *TemplateError) Error() string { return fmt.Sprintf("%s: %v", e.Template, e.Err) }

// Unwrap returns the parse or execution error.
func (e *TemplateError) Unwrap() error { return e.Err }

// commitMessage executes the commit message template over root.
func commitMessage(t *template.Template, root Metadata) (string, error) {
	raw, err := json.Marshal(root)
	if err != nil {
		return "", err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, map[string]any{"metadata": m}); err != nil {
		return "", &TemplateError{Template: t.Name(), Err: err}
	}
	return b.String(), nil
}

// RootMetadata is the root's Metadata of a hydration of drySHA of repoURL
// whose commit has md: the message's first paragraph is the subject, the
// rest the body.
func RootMetadata(repoURL, drySHA string, md source.RevisionMetadata) Metadata {
	subject, body, _ := strings.Cut(md.Message, "\n\n")
	m := Metadata{RepoURL: repoURL, DrySHA: drySHA, Author: md.Author,
		Subject: strings.TrimSpace(subject), Body: strings.TrimSpace(body)}
	if !md.Date.IsZero() {
		m.Date = md.Date.Format(time.RFC3339)
	}
	return m
}
