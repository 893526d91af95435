package hooks

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(ann map[string]string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion("batch/v1")
	o.SetKind("Job")
	o.SetNamespace("web")
	o.SetName("migrate")
	o.SetAnnotations(ann)
	return o
}

func TestOf(t *testing.T) {
	cases := []struct {
		name     string
		ann      map[string]string
		hook     bool
		skip     bool
		phases   []Phase
		policies []DeletePolicy
		wave     int
		helm     bool
	}{
		{name: "ordinary", ann: nil},
		{name: "argo presync", ann: map[string]string{"argocd.argoproj.io/hook": "PreSync"},
			hook: true, phases: []Phase{PreSync}, policies: []DeletePolicy{BeforeHookCreation}},
		{name: "argo csv with spaces", ann: map[string]string{"argocd.argoproj.io/hook": "PreSync, PostSync"},
			hook: true, phases: []Phase{PreSync, PostSync}, policies: []DeletePolicy{BeforeHookCreation}},
		{name: "deletion hook", ann: map[string]string{"argocd.argoproj.io/hook": "PostDelete"},
			hook: true, phases: []Phase{PostDelete}, policies: []DeletePolicy{BeforeHookCreation}},
		{name: "skip", ann: map[string]string{"argocd.argoproj.io/hook": "Skip"}, skip: true},
		{name: "argo wins over helm", ann: map[string]string{"argocd.argoproj.io/hook": "SyncFail", "helm.sh/hook": "pre-install"},
			hook: true, phases: []Phase{SyncFail}, policies: []DeletePolicy{BeforeHookCreation}},
		{name: "helm pre", ann: map[string]string{"helm.sh/hook": "pre-install,pre-upgrade"},
			hook: true, phases: []Phase{PreSync}, policies: []DeletePolicy{BeforeHookCreation}, helm: true},
		{name: "helm post with weight", ann: map[string]string{"helm.sh/hook": "post-upgrade", "helm.sh/hook-weight": "-5"},
			hook: true, phases: []Phase{PostSync}, policies: []DeletePolicy{BeforeHookCreation}, wave: -5, helm: true},
		{name: "helm crd-install is not a hook", ann: map[string]string{"helm.sh/hook": "crd-install"}},
		{name: "helm test is a hook we never run", ann: map[string]string{"helm.sh/hook": "test"},
			hook: true, policies: []DeletePolicy{BeforeHookCreation}, helm: true},
		{name: "policies united", ann: map[string]string{"argocd.argoproj.io/hook": "Sync",
			"argocd.argoproj.io/hook-delete-policy": "HookSucceeded", "helm.sh/hook-delete-policy": "hook-failed,hook-succeeded"},
			hook: true, phases: []Phase{Sync}, policies: []DeletePolicy{HookSucceeded, HookFailed}},
		{name: "sync-wave beats hook-weight", ann: map[string]string{"argocd.argoproj.io/sync-wave": "2", "helm.sh/hook-weight": "9"}, wave: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info, err := Of(obj(c.ann))
			if err != nil {
				t.Fatal(err)
			}
			if info.Hook != c.hook || info.Skip != c.skip || info.FromHelm != c.helm || info.Wave != c.wave {
				t.Fatalf("info = %+v", info)
			}
			if !slices.Equal(info.Phases, c.phases) || !slices.Equal(info.DeletePolicies, c.policies) {
				t.Fatalf("phases %v policies %v", info.Phases, info.DeletePolicies)
			}
			if info.Applied() != (!c.hook && !c.skip) {
				t.Fatal("Applied wrong")
			}
		})
	}
}

func TestOfRejectsWhatWouldSilentlyNeverRun(t *testing.T) {
	for _, ann := range []map[string]string{
		{"argocd.argoproj.io/hook": "PreSnyc"},
		{"argocd.argoproj.io/hook": "Skip,PreSync"},
		{"argocd.argoproj.io/hook": " , "},
		{"argocd.argoproj.io/hook": "Sync", "argocd.argoproj.io/hook-delete-policy": "Always"},
		{"helm.sh/hook": "pre-install", "helm.sh/hook-delete-policy": "never"},
		{"argocd.argoproj.io/sync-wave": "one"},
	} {
		_, err := Of(obj(ann))
		if err == nil {
			t.Errorf("%v accepted", ann)
			continue
		}
		if !strings.HasPrefix(err.Error(), "batch/Job web/migrate: annotation ") {
			t.Errorf("error %q does not name the object and annotation", err)
		}
	}
}

func TestPhaseOrder(t *testing.T) {
	if !(PreSync.Order() < Sync.Order() && Sync.Order() < PostSync.Order() && PostSync.Order() < SyncFail.Order()) {
		t.Fatal("phase order wrong")
	}
}

func TestName(t *testing.T) {
	o := obj(nil)
	o.SetName("")
	o.SetGenerateName("db-migrate-")
	start := time.Unix(1700000000, 0)
	if got := Name(o, "ABCDEF0123456789", PreSync, start); got != "db-migrate-abcdef0-presync-1700000000" {
		t.Fatalf("Name = %q", got)
	}
	if Name(o, "abcdef0123", PreSync, start) != Name(o, "abcdef0123", PreSync, start) {
		t.Fatal("name not stable within one sync")
	}
	if Name(o, "abc", PostSync, start.Add(time.Second)) == Name(o, "abc", PostSync, start) {
		t.Fatal("a new sync reuses the name")
	}
	if got := Name(o, "sha256:6e199054a2,abcdef0", PreSync, start); got != "db-migrate-6e19905-presync-1700000000" {
		t.Fatalf("Name of a folder's content hash = %q", got)
	}
	if got := Name(o, "", PreSync, start); got != "db-migrate--presync-1700000000" {
		t.Fatalf("Name without a revision = %q", got)
	}
	if Name(obj(nil), "abc", Sync, start) != "migrate" {
		t.Fatal("a named hook was renamed")
	}
}

// TestOneHookFinalizer: the finalizer is Argo CD's, and the legacy one is
// still recognised (so it is removed).
func TestOneHookFinalizer(t *testing.T) {
	if Finalizer != "argocd.argoproj.io/hook-finalizer" {
		t.Fatalf("Finalizer %q is not Argo CD's", Finalizer)
	}
	if !IsFinalizer(Finalizer) || !IsFinalizer(LegacyFinalizer) || IsFinalizer("example.com/other") {
		t.Fatal("IsFinalizer does not recognise exactly the two hook finalizers")
	}
}
