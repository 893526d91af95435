package main

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"text/template"

	"github.com/kubegitops/gitops"
)

// demoFiles is the bundled demo: the repository served over Git and the
// Applications that deploy it.
//
//go:embed demo/repo demo/applications.yaml
var demoFiles embed.FS

// demoRepository returns the files of the demo repository.
func demoRepository() (fs.FS, error) {
	return fs.Sub(demoFiles, "demo/repo")
}

// demoApplications returns the demo's Applications for a repository URL,
// deploying into namespaces that start with prefix.
func demoApplications(repoURL, prefix string) ([]*gitops.Application, error) {
	text, err := demoApplicationsYAML(repoURL, prefix)
	if err != nil {
		return nil, err
	}
	apps, err := gitops.LoadApplications(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("demo applications: %w", err)
	}
	out := make([]*gitops.Application, len(apps))
	for i := range apps {
		out[i] = &apps[i]
	}
	return out, nil
}

// demoApplicationsYAML returns the demo's Applications as YAML.
func demoApplicationsYAML(repoURL, prefix string) ([]byte, error) {
	text, err := demoFiles.ReadFile("demo/applications.yaml")
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New("applications.yaml").Option("missingkey=error").Parse(string(text))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, struct{ RepoURL, Prefix string }{repoURL, prefix}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
