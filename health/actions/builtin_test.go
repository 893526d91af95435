package actions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/health/internal/argotest"
)

// TestBuiltinActions runs every shipped action's Argo-format tests.
func TestBuiltinActions(t *testing.T) {
	report, err := RunTests(context.Background(), BuiltinScripts(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if report.Folders != 7 {
		t.Errorf("want 7 actions folders, found %d", report.Folders)
	}
	if len(report.Results) < 40 {
		t.Errorf("want at least 40 cases, found %d", len(report.Results))
	}
	for _, r := range report.Results {
		if !r.Passed() {
			t.Error(r)
		}
	}
}

// TestRunTests_ReportsFailures proves the runner can fail: a wrong
// expected output, a missing error and an untested folder are reported.
func TestRunTests_ReportsFailures(t *testing.T) {
	fsys := fstest.MapFS{
		"apps/Deployment/actions/discovery.lua":      {Data: []byte(`return {bump = {}}`)},
		"apps/Deployment/actions/bump/action.lua":    {Data: []byte(`obj.spec.replicas = 9 return obj`)},
		"apps/Deployment/actions/testdata/in.yaml":   {Data: []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {replicas: 1}\n")},
		"apps/Deployment/actions/testdata/want.yaml": {Data: []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {replicas: 2}\n")},
		"apps/Deployment/actions/action_test.yaml": {Data: []byte(`
discoveryTests:
- inputPath: testdata/in.yaml
  result: [{name: bump}]
actionTests:
- {action: bump, inputPath: testdata/in.yaml, expectedOutputPath: testdata/want.yaml}
- {action: bump, inputPath: testdata/in.yaml, expectedErrorMessage: boom}
- {action: bump, inputPath: ../../../etc/passwd, expectedOutputPath: testdata/want.yaml}
`)},
		"batch/Job/actions/discovery.lua": {Data: []byte(`return {}`)},
	}
	report, err := RunTests(context.Background(), fsys, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range report.Results {
		got = append(got, fmt.Sprintf("%s %v", r.Case, r.Passed()))
	}
	want := []string{"discovery testdata/in.yaml true", "bump testdata/in.yaml false", "bump testdata/in.yaml false", "bump ../../../etc/passwd false", "load false"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q", got)
	}
	if !errors.Is(report.Results[4].Err, ErrNoTests) {
		t.Fatalf("untested folder: %v", report.Results[4].Err)
	}
}

// TestLoadDir_ArgoLayout reads a library laid out as Argo CD's
// resource_customizations, wildcard folders included.
func TestLoadDir_ArgoLayout(t *testing.T) {
	fsys := fstest.MapFS{
		"_.example.com/_/actions/discovery.lua":       {Data: []byte(`return {poke = {}}`)},
		"_.example.com/_/actions/poke/action.lua":     {Data: []byte(`return obj`)},
		"apps/Deployment/health.lua":                  {Data: []byte(`return {status = "Healthy"}`)},
		"batch/Job/actions/discovery.lua":             {Data: []byte(`return {}`)},
		"batch/Job/actions/testdata/in.yaml":          {Data: []byte("kind: Job\n")},
		"batch/Job/actions/not-an-action/README.md":   {Data: []byte("no action.lua here")},
		"apps/StatefulSet/actions/restart/action.lua": {Data: []byte(`return obj`)},
	}
	if _, err := LoadDir(fsys); !errors.Is(err, ErrInvalidDefinition) {
		t.Fatalf("actions folder without discovery.lua: %v", err)
	}
	delete(fsys, "apps/StatefulSet/actions/restart/action.lua")
	defs, err := LoadDir(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 2 || len(defs["*.example.com/*"].Actions) != 1 || len(defs["batch/Job"].Actions) != 0 {
		t.Fatalf("%+v", defs)
	}
}

// TestCronJobCreateJob_LongName checks the name a Job created from a
// CronJob with a long name gets: cut so that name and suffix stay within
// 63 characters. Argo CD's test format cannot say this (it matches a
// created Job by the CronJob's full name as a prefix), so it is checked
// here against the expected output kept in the CronJob's testdata.
func TestCronJobCreateJob_LongName(t *testing.T) {
	ctx := context.Background()
	opts := DefaultOptions()
	opts.Lua.Clock = func() time.Time { return TestClock }
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := "batch/CronJob/actions"
	in, err := argotest.ReadObject(BuiltinScripts(), dir, "testdata/cronjob-long-name.yaml", dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := argotest.ReadObject(BuiltinScripts(), dir, "testdata/job-long-name.yaml", dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(ctx, in, "create-job", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Impacted) != 1 || res.Impacted[0].Operation != OperationCreate {
		t.Fatalf("want one create, got %+v", res.Impacted)
	}
	got := res.Impacted[0].Object
	if got.GetName() != want.GetName() || len(got.GetName()) != 63 {
		t.Fatalf("name %q (%d characters), want %q", got.GetName(), len(got.GetName()), want.GetName())
	}
	if err := compareEntry(want, testEntry{op: OperationPatch, obj: got}); err != nil {
		t.Fatal(err)
	}
}
