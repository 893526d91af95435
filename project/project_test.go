package project

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"*", "anything/at/all", true}, {"team-a-*", "team-a-dev", true}, {"team-a-*", "kube-system", false},
		{"https://example.com/team-a/*", "https://example.com/team-a/apps.git", true},
		{"https://example.com/team-a/*", "https://example.com/team-b/apps.git", false},
		{"a?c", "abc", true}, {"a?c", "ac", false}, {"", "", true}, {"", "x", false}, {"*x*y", "axbxy", true},
	} {
		if got := Glob(c.p, c.s); got != c.want {
			t.Errorf("Glob(%q, %q) = %v", c.p, c.s, got)
		}
	}
}

func teamA(t *testing.T) *v1alpha1.AppProject {
	t.Helper()
	ps, err := v1alpha1.LoadProjects(strings.NewReader(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team-a}
spec:
  sourceRepos: ['https://git.example.com/team-a/*']
  destinations:
  - {server: '*', namespace: 'team-a-*'}
  - {server: '*', namespace: '!team-a-secret'}
  clusterResourceWhitelist: [{group: '*', kind: '*'}]
  clusterResourceBlacklist: [{group: rbac.authorization.k8s.io, kind: ClusterRoleBinding}]
  namespaceResourceBlacklist: [{group: '', kind: ResourceQuota}]
`))
	if err != nil {
		t.Fatal(err)
	}
	return &ps[0]
}

func obj(t *testing.T, yaml string) *unstructured.Unstructured {
	t.Helper()
	objs, err := resource.Decode("t.yaml", []byte(yaml), resource.DefaultDecodeOptions())
	if err != nil {
		t.Fatal(err)
	}
	return objs[0]
}

func TestProjectChecks(t *testing.T) {
	p := teamA(t)
	dest := v1alpha1.ApplicationDestination{Server: "https://k", Namespace: "team-a-dev"}
	cases := []struct {
		name       string
		yaml       string
		namespaced bool
		rule       string // "" = allowed
	}{
		{"in own namespace", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", true, ""},
		{"names kube-system", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: kube-system}\n", true, "destinations"},
		{"denied namespace", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: team-a-secret}\n", true, "destinations"},
		{"blacklisted namespaced kind", "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\n", true, "namespaceResourceBlacklist"},
		{"blacklisted cluster kind", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\n", false, "clusterResourceBlacklist"},
		{"allowed cluster kind", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n", false, ""},
	}
	for _, c := range cases {
		err := CheckObject(p, dest, obj(t, c.yaml), c.namespaced)
		var pe *PolicyError
		switch {
		case c.rule == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.rule != "" && (!errors.As(err, &pe) || pe.Rule != c.rule || !errors.Is(err, ErrPolicy)):
			t.Errorf("%s: err = %v, want rule %s", c.name, err, c.rule)
		}
	}
	// Without a cluster whitelist no cluster-scoped kind is allowed.
	strict := *p
	strict.Spec.ClusterResourceWhitelist = nil
	if err := CheckObject(&strict, dest, obj(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n"), false); err == nil {
		t.Error("cluster-scoped object allowed without a whitelist")
	}
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/team-b/apps.git"}, Destination: dest}}
	var pe *PolicyError
	if err := CheckApplication(p, app); !errors.As(err, &pe) || pe.Rule != "sourceRepos" {
		t.Errorf("foreign repository allowed: %v", err)
	}
	app.Spec.Source.RepoURL = "https://git.example.com/team-a/apps.git"
	if err := CheckApplication(p, app); err != nil {
		t.Errorf("own repository refused: %v", err)
	}
	// A source hydrator's dry source and the repository it hydrates into
	// are both sources of the app.
	app.Spec.Source = nil
	app.Spec.SourceHydrator = &v1alpha1.SourceHydrator{
		DrySource:  v1alpha1.DrySource{RepoURL: "https://git.example.com/team-b/dry.git", TargetRevision: "HEAD", Path: "chart"},
		SyncSource: v1alpha1.SyncSource{TargetBranch: "env/dev", Path: "chart", RepoURL: "https://git.example.com/team-a/apps.git"},
	}
	if err := CheckApplication(p, app); err == nil || !strings.Contains(err.Error(), "team-b/dry.git") {
		t.Errorf("foreign dry source allowed: %v", err)
	}
	app.Spec.SourceHydrator.DrySource.RepoURL = "https://git.example.com/team-a/apps.git"
	app.Spec.SourceHydrator.SyncSource.RepoURL = "https://git.example.com/team-b/deploy.git"
	if err := CheckApplication(p, app); err == nil || !strings.Contains(err.Error(), "team-b/deploy.git") {
		t.Errorf("foreign hydrated repository allowed: %v", err)
	}
	app.Spec.SourceHydrator.SyncSource.RepoURL = ""
	if err := CheckApplication(p, app); err != nil {
		t.Errorf("own dry and sync repository refused: %v", err)
	}
}

func TestSyncWindows(t *testing.T) {
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Destination: v1alpha1.ApplicationDestination{Server: "https://k", Namespace: "web"}}}
	app.Name = "shop"
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	deny := v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{SyncWindows: []v1alpha1.SyncWindow{
		{Kind: "deny", Schedule: "0 22 * * *", Duration: "8h", Applications: []string{"sh*"}, TimeZone: "Europe/Berlin"},
	}}}
	for when, allowed := range map[string]bool{
		"2026-11-29T21:30:00Z": false, // 22:30 in Berlin: inside
		"2026-11-30T04:59:00Z": false, // 05:59 in Berlin: still inside
		"2026-11-30T05:01:00Z": true,  // 06:01: closed
		"2026-11-29T20:30:00Z": true,  // 21:30: not yet
	} {
		d, err := SyncAllowed(&deny, app, at(when), false)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed != allowed || (!allowed && (d.Blocking == nil || !strings.Contains(d.Reason, "deny window"))) {
			t.Errorf("%s: %+v, want allowed=%v", when, d, allowed)
		}
	}
	// manualSync lets a person through.
	deny.Spec.SyncWindows[0].ManualSync = true
	if d, _ := SyncAllowed(&deny, app, at("2026-11-29T21:30:00Z"), true); !d.Allowed {
		t.Error("manual sync blocked by a manualSync deny window")
	}
	if d, _ := SyncAllowed(&deny, app, at("2026-11-29T21:30:00Z"), false); d.Allowed {
		t.Error("automated sync passed a manualSync deny window")
	}
	// An allow window that is closed blocks; one for other apps does not.
	allow := v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{SyncWindows: []v1alpha1.SyncWindow{{Kind: "allow", Schedule: "0 9 * * 1-5", Duration: "8h", Namespaces: []string{"web"}}}}}
	if d, _ := SyncAllowed(&allow, app, at("2026-11-29T10:00:00Z"), false); d.Allowed { // a Sunday
		t.Error("closed allow window did not block")
	}
	if d, _ := SyncAllowed(&allow, app, at("2026-11-30T10:00:00Z"), false); !d.Allowed { // Monday 10:00
		t.Error("open allow window blocked")
	}
	other := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Destination: v1alpha1.ApplicationDestination{Server: "https://k", Namespace: "db"}}}
	if d, _ := SyncAllowed(&allow, other, at("2026-11-29T10:00:00Z"), false); !d.Allowed {
		t.Error("a window for another namespace blocked")
	}
}
