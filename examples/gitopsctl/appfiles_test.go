package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const appTemplate = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: NAME
spec:
  source: {repoURL: /repo, path: .}
  destination: {server: https://kubernetes.default.svc, namespace: default}
`

func writeApp(t *testing.T, dir, file, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(strings.ReplaceAll(appTemplate, "NAME", name)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadAppsPath(t *testing.T) {
	dir := t.TempDir()
	writeApp(t, dir, "a.yaml", "a")
	writeApp(t, dir, "b.yml", "b")
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# not an app"), 0o644); err != nil {
		t.Fatal(err)
	}
	apps, err := loadAppsPath(dir)
	if err != nil || len(apps) != 2 || apps[0].Name != "a" || apps[1].Name != "b" {
		t.Fatalf("loadAppsPath = %v, %v; want a and b", apps, err)
	}

	writeApp(t, dir, "c.json.yaml", "a")
	if _, err := loadAppsPath(dir); err == nil || !strings.Contains(err.Error(), `"a" is defined in`) {
		t.Fatalf("duplicate name: %v", err)
	}
	if _, err := loadAppsPath(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no .yaml") {
		t.Fatalf("empty folder: %v", err)
	}
	if _, err := loadAppsPath(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Fatal("missing file loaded")
	}
}

func TestLoadAppPicksByName(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "apps.yaml")
	both := strings.ReplaceAll(appTemplate, "NAME", "one") + "---\n" + strings.ReplaceAll(appTemplate, "NAME", "two")
	if err := os.WriteFile(file, []byte(both), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadApp(file, ""); err == nil || !strings.Contains(err.Error(), "--name") {
		t.Fatalf("two apps without --name: %v", err)
	}
	app, err := loadApp(file, "two")
	if err != nil || app.Name != "two" {
		t.Fatalf("loadApp(two) = %v, %v", app, err)
	}
	if _, err := loadApp(file, "three"); err == nil || !strings.Contains(err.Error(), "one, two") {
		t.Fatalf("unknown name: %v", err)
	}
}
