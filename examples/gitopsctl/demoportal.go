package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
)

// writePortalFiles writes what examples/portal needs to serve the demo's
// apps into a new private folder: the Applications, a policy making group
// "demo" admin, and a token file with one fresh token for user "demo". The
// token is never printed, only the file's path.
func (d *demo) writePortalFiles() (string, error) {
	dir, err := os.MkdirTemp("", "gitops-demo-portal-")
	if err != nil {
		return "", err
	}
	text, err := demoApplicationsYAML(d.repoURL, d.flags.prefix)
	if err == nil {
		err = os.Mkdir(filepath.Join(dir, "apps"), 0o700)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"apps/applications.yaml", text},
		{"policy.yaml", []byte("rules:\n  - group: demo\n    role: admin\n")},
		{"tokens.txt", []byte(rand.Text() + rand.Text() + " demo demo\n")},
	} {
		if err != nil {
			break
		}
		err = os.WriteFile(filepath.Join(dir, f.name), f.data, 0o600)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}
