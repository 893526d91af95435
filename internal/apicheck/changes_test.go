package apicheck

import (
	"reflect"
	"testing"
)

const mod = "github.com/kubegitops/gitops"

func TestParseReportNamesEachChangeAsTheChangelogListsIt(t *testing.T) {
	out := `- New: removed
- ./engine.Options.Workers: removed
- ./engine.(*Engine).Sync: changed from func(context.Context) error to func() error
- ./imageupdate/controller.HeldOverride: removed
- ./apis/v1alpha1.List[T].Len: removed
- package github.com/kubegitops/gitops/source/oci: removed
- ./examples/portal/api.Server: removed
- ./appset/internal/gen.Thing: removed
- k8s.io/api/core/v1.Pod.Spec: changed
`
	var got []string
	for _, c := range ParseReport(out, mod) {
		got = append(got, c.Name)
	}
	want := []string{
		"gitops.New",
		"engine.Options.Workers",
		"engine.Engine.Sync",
		"imageupdate/controller.HeldOverride",
		"apis/v1alpha1.List.Len",
		"github.com/kubegitops/gitops/source/oci",
		"k8s.io/api/core/v1.Pod.Spec",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("names:\n got %q\nwant %q", got, want)
	}
}

func TestListedReadsOnlyTheUnreleasedSection(t *testing.T) {
	changelog := "# Changelog\n\nRule: `engine.Prose` above the sections.\n\n" +
		"## Unreleased\n\n- `engine.Engine.Sync(ctx, req)` takes a request: use `engine.SyncRequest`.\n" +
		"- `gitops.Old.` removed; package `github.com/kubegitops/gitops/source/oci` removed.\n\n" +
		"## v0.1.0\n\n- `engine.Released` removed.\n"
	got := Listed(changelog)
	want := map[string]bool{
		"engine.Engine.Sync": true, "engine.SyncRequest": true, "gitops.Old": true,
		"github.com/kubegitops/gitops/source/oci": true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Listed = %v, want %v", got, want)
	}
}

func TestAcceptedCoversAMemberOfAListedTypeButNotOfAListedPackage(t *testing.T) {
	listed := map[string]bool{
		"engine.Options": true, "engine": true, "gitops.New": true,
		"github.com/kubegitops/gitops/source/oci": true, "source/helm.Chart.Pull": true,
	}
	for name, want := range map[string]bool{
		"engine.Options":                          true,
		"engine.Options.Workers":                  true,
		"engine.Engine.Sync":                      false, // `engine` in prose covers nothing
		"engine.OptionsExtra":                     false,
		"gitops.New":                              true,
		"gitops.NewFoo":                           false,
		"github.com/kubegitops/gitops/source/oci": true,
		"github.com/kubegitops/gitops/source/git": false,
		"source/helm.Chart.Pull":                  true,
		"source/helm.Chart":                       false, // a member listed does not cover its type
	} {
		if got := (Change{Name: name}).Accepted(listed); got != want {
			t.Errorf("Accepted(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestReadReleaseRefusesALineWithoutACommit(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, ReleaseFile, "# comment\nv0.1.0 1c11138\n")
	if _, err := ReadRelease(dir); err == nil {
		t.Fatal("ReadRelease accepted an abbreviated commit")
	}
	writeFile(t, dir, ReleaseFile, "# comment\n\nv0.1.0 1c1113893199c2623b1efee5c2b8765a372a3de7\n")
	rel, err := ReadRelease(dir)
	if err != nil || rel != (Release{Version: "v0.1.0", Commit: "1c1113893199c2623b1efee5c2b8765a372a3de7"}) {
		t.Fatalf("ReadRelease = %+v, %v", rel, err)
	}
}
