package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const folderApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: plain}
spec:
  project: default
  source: {repoURL: https://example.com/r.git, path: p}
  destination: {server: https://kubernetes.default.svc, namespace: ns1}
`

const folderMatrixSet = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: mixed-gens}
spec:
  generators:
    - matrix:
        generators:
          - list: {elements: [{a: b}]}
          - plugin: {configMapRef: {name: my-plugin}}
  template:
    metadata: {name: 'm-{{a}}'}
    spec:
      project: default
      source: {repoURL: https://example.com/r.git, path: p}
      destination: {server: https://kubernetes.default.svc, namespace: ns1}
`

func writeFolder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestFolderAppSetFiles reads a folder of an app file and a set file: the
// apps come from the one, the sets from the other; a set whose matrix
// nests a plugin generator is named as not run over a folder; a folder of
// sets alone has no app and no error; a file mixing an Application with an
// ApplicationSet fails both loads with a *setFileError naming it.
func TestFolderAppSetFiles(t *testing.T) {
	dir := writeFolder(t, map[string]string{"apps.yaml": folderApp, "sets.yaml": folderMatrixSet})
	apps, err := loadAppsDir(dir)
	if err != nil || len(apps) != 1 || apps[0].Name != "plain" {
		t.Fatalf("apps %v, %v; want plain alone", apps, err)
	}
	sets, err := loadAppSetsDir(dir)
	if err != nil || len(sets) != 1 || sets[0].Name != "mixed-gens" {
		t.Fatalf("sets %v, %v; want mixed-gens", sets, err)
	}
	why := notRunInFolder(&sets[0])
	if len(why) != 1 || !strings.HasPrefix(why[0], "plugin generator: ") {
		t.Errorf("not run because %q, want the nested plugin generator named", why)
	}

	only := writeFolder(t, map[string]string{"sets.yaml": folderMatrixSet})
	if apps, err := loadAppsDir(only); err != nil || len(apps) != 0 {
		t.Errorf("a folder of sets alone: apps %v, %v; want none and no error", apps, err)
	}

	mixed := writeFolder(t, map[string]string{"all.yaml": folderApp + "---\n" + folderMatrixSet})
	for what, load := range map[string]func(string) error{
		"apps": func(d string) error { _, err := loadAppsDir(d); return err },
		"sets": func(d string) error { _, err := loadAppSetsDir(d); return err },
	} {
		err := load(mixed)
		var sfe *setFileError
		if !errors.As(err, &sfe) || sfe.File != "all.yaml" || !strings.Contains(err.Error(), "files of their own") {
			t.Errorf("%s of a mixed file: %v, want a *setFileError naming all.yaml", what, err)
		}
	}
}
