package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// folderApps is an --apps file as a user writes it: two apps, comments,
// and a flow mapping.
const folderApps = `# team apps, kept by hand
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: web # the shop
spec:
  project: default
  # where it comes from
  source: {repoURL: https://example.com/r.git, path: web, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: web}
  revisionHistoryLimit: 3 # three is plenty
  syncPolicy:
    syncOptions:
      - CreateNamespace=true # needed once
---
# the second one
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: api
spec:
  project: default
  source: {repoURL: https://example.com/r.git, path: api}
  destination: {server: https://kubernetes.default.svc, namespace: api}
`

// TestAppFolderUpdate writes an edit of one app (a sync option added,
// automated sync on, a Helm parameter) to its file: the edit is there and
// loads back, the other app, the comments, the other fields and the
// unchanged option stay, and a create and a delete add and take out files.
func TestAppFolderUpdate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "apps.yaml")
	if err := os.WriteFile(path, []byte(folderApps), 0o640); err != nil {
		t.Fatal(err)
	}
	apps, err := loadAppsDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	web := apps[1]
	if web.Name != "web" {
		web = apps[0]
	}
	next := web.DeepCopy()
	next.Spec.SyncPolicy.SyncOptions = append(next.Spec.SyncPolicy.SyncOptions, "PruneLast=true")
	next.Spec.SyncPolicy.Automated = &v1alpha1.SyncPolicyAutomated{SelfHeal: true}
	next.Spec.Source.Helm = &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "image.tag", Value: "v2"}}}
	f := &appFolder{dir: dir}
	if err := f.update(web, next); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{"# team apps, kept by hand", "# the shop", "# where it comes from", "revisionHistoryLimit: 3 # three is plenty",
		"CreateNamespace=true # needed once", "PruneLast=true", "selfHeal: true", "image.tag", "# the second one", "name: api"} {
		if !strings.Contains(text, want) {
			t.Errorf("the file after the edit lacks %q:\n%s", want, text)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("the file's mode is %v, want 0640 kept", fi.Mode().Perm())
	}
	again, err := loadAppsDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range again {
		if a.Name == "web" && (a.Spec.SyncPolicy.Automated == nil || !a.Spec.SyncPolicy.Automated.SelfHeal ||
			len(a.Spec.SyncPolicy.SyncOptions) != 2 || a.Spec.Source.Helm == nil || a.Spec.Source.Helm.Parameters[0].Value != "v2") {
			t.Errorf("web loaded back: %+v", a.Spec)
		}
	}
	// Turned off again: the block the edit added goes.
	back := next.DeepCopy()
	back.Spec.SyncPolicy.Automated = nil
	if err := f.update(next, back); err != nil {
		t.Fatal(err)
	}
	if b, _ = os.ReadFile(path); strings.Contains(string(b), "selfHeal") || !strings.Contains(string(b), "revisionHistoryLimit") {
		t.Errorf("after automated sync off:\n%s", b)
	}

	created := &v1alpha1.Application{Spec: web.Spec}
	created.Name = "new-one"
	if err := f.create(created); err != nil {
		t.Fatal(err)
	}
	if err := f.create(created); err == nil {
		t.Error("a second create of new-one: no error")
	}
	if err := f.remove("web"); err != nil {
		t.Fatal(err)
	}
	if err := f.remove("new-one"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new-one.yaml")); !os.IsNotExist(err) {
		t.Errorf("new-one.yaml after its delete: %v", err)
	}
	left, err := loadAppsDir(dir)
	if err != nil || len(left) != 1 || left[0].Name != "api" {
		t.Errorf("after deleting web: %v %v, want api alone", left, err)
	}
	if err := f.update(web, next); err == nil || !strings.Contains(err.Error(), "application web") {
		t.Errorf("an edit of a deleted app: %v, want an error naming it", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d entries, want apps.yaml alone (no temporary file left)", len(entries))
	}
}
