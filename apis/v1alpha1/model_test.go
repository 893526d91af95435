package v1alpha1

import (
	"errors"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

func loadFile(t *testing.T, name string) []Application {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	apps, err := LoadApplications(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return apps
}

// TestKubectlOutputLoads: what kubectl prints for an Application an Argo
// CD controller manages loads, status, operation and managedFields
// included, and what the model knows of them is kept.
func TestKubectlOutputLoads(t *testing.T) {
	apps := loadFile(t, "testdata/kubectl-get-application.yaml")
	if len(apps) != 1 {
		t.Fatalf("%d apps", len(apps))
	}
	a := apps[0]
	if len(a.ManagedFields) != 2 || a.ManagedFields[1].Subresource != "status" || a.Generation != 42 || string(a.UID) == "" {
		t.Errorf("metadata not kept: %+v", a.ObjectMeta)
	}
	if len(a.Spec.Info) != 1 || a.Spec.Info[0].Value != "team-a" {
		t.Errorf("spec.info = %+v", a.Spec.Info)
	}
	st := a.Status
	if st.Sync.Status != "Synced" || st.Sync.ComparedTo == nil || st.Sync.ComparedTo.Source.Path != "guestbook" {
		t.Errorf("status.sync = %+v", st.Sync)
	}
	if st.Health.Status != "Healthy" || st.ReconciledAt == nil || len(st.Resources) != 2 || st.Resources[1].SyncWave != 1 {
		t.Errorf("status = %+v", st)
	}
	if len(st.History) != 1 || st.History[0].ID != 3 || st.History[0].Source == nil {
		t.Errorf("status.history = %+v", st.History)
	}
	ops := st.OperationState
	if ops == nil || ops.Phase != "Succeeded" || ops.SyncResult == nil || len(ops.SyncResult.Resources[0].Images) != 1 || ops.Operation.Retry == nil {
		t.Errorf("status.operationState = %+v", ops)
	}
	if len(st.Summary.Images) != 1 || st.SourceType != "Directory" || st.ResourceHealthSource != "appTree" {
		t.Errorf("status summary, sourceType, resourceHealthSource = %+v %q %q", st.Summary, st.SourceType, st.ResourceHealthSource)
	}
	op := a.Operation
	if op == nil || op.Sync == nil || op.Sync.SelfHealAttemptsCount != 1 || op.Sync.SyncStrategy == nil || op.Sync.SyncStrategy.Hook == nil || op.InitiatedBy.Username != "admin" {
		t.Errorf("operation = %+v", op)
	}
}

// TestLenientOnlyWhereControllersWrite: an unknown field in status is
// dropped, one in spec is refused with its line, and a value of the wrong
// type in status is still an error naming it.
func TestLenientOnlyWhereControllersWrite(t *testing.T) {
	base := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a}\nspec:\n  source: {repoURL: https://x/r.git}\n  destination: {server: https://k}\n"
	if _, err := LoadApplications(strings.NewReader(base + "status: {sync: {status: Synced}, someNewField: 1}\noperation: {sync: {}, futureField: x}\n")); err != nil {
		t.Errorf("unknown status and operation fields refused: %v", err)
	}
	_, err := LoadApplications(strings.NewReader(base + "  colour: red\n"))
	var le *LoadError
	if !errors.As(err, &le) || le.Path != "spec.colour" || le.Line != 7 {
		t.Errorf("unknown spec field: %v", err)
	}
	_, err = LoadApplications(strings.NewReader(base + "status:\n  history: {id: 1}\n"))
	if !errors.As(err, &le) || le.Path != "status.history" || le.Line != 8 {
		t.Errorf("status of the wrong type: %v", err)
	}
}

// TestDeepCopyIsIndependent: the generated DeepCopy shares no memory with
// the original, down to status and operation.
func TestDeepCopyIsIndependent(t *testing.T) {
	a := loadFile(t, "testdata/kubectl-get-application.yaml")[0]
	before, err := yaml.Marshal(&a)
	if err != nil {
		t.Fatal(err)
	}
	c := a.DeepCopy()
	c.Spec.Source.Path = "changed"
	c.Spec.Info[0].Value = "changed"
	c.Status.Resources[0].Name = "changed"
	c.Status.OperationState.SyncResult.Resources[0].Images[0] = "changed"
	c.Status.Sync.ComparedTo.Source.RepoURL = "changed"
	c.Operation.Sync.SyncStrategy.Hook.Force = true
	c.ManagedFields[0].Manager = "changed"
	after, err := yaml.Marshal(&a)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Errorf("changing the copy changed the original")
	}
	var obj runtime.Object = c
	if _, ok := obj.DeepCopyObject().(*Application); !ok {
		t.Error("DeepCopyObject is not an *Application")
	}
}

// TestSchemeKnowsTheKinds: AddToScheme registers the kinds under
// argoproj.io/v1alpha1, and an object made by the scheme is the model's.
func TestSchemeKnowsTheKinds(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{ApplicationKind, "ApplicationList", AppProjectKind, "AppProjectList", ApplicationSetKind, "ApplicationSetList"} {
		obj, err := s.New(SchemeGroupVersion.WithKind(kind))
		if err != nil {
			t.Errorf("%s: %v", kind, err)
			continue
		}
		gvks, _, err := s.ObjectKinds(obj)
		if err != nil || len(gvks) != 1 || gvks[0].Kind != kind || gvks[0].Group != "argoproj.io" {
			t.Errorf("%s: kinds %v %v", kind, gvks, err)
		}
	}
	if _, ok := mustNew(t, s, ApplicationKind).(*Application); !ok {
		t.Error("the scheme's Application is not *Application")
	}
}

func mustNew(t *testing.T, s *runtime.Scheme, kind string) runtime.Object {
	t.Helper()
	obj, err := s.New(SchemeGroupVersion.WithKind(kind))
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestValidateInMemory: Validate reports what the loader would, for an
// object built in code, with every bad field.
func TestValidateInMemory(t *testing.T) {
	a := &Application{Spec: ApplicationSpec{Source: &ApplicationSource{Path: "/etc"}}}
	a.Name = "Bad_Name"
	err := a.Validate()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Validate = %v", err)
	}
	got := map[string]bool{}
	for _, f := range ve.Fields {
		got[f.Field] = true
	}
	for _, want := range []string{"metadata.name", "spec.source.repoURL", "spec.source.path", "spec.destination"} {
		if !got[want] {
			t.Errorf("no error for %s in %v", want, err)
		}
	}
	good := &Application{Spec: ApplicationSpec{Source: &ApplicationSource{RepoURL: "https://x/r.git"}, Destination: ApplicationDestination{Server: "https://k"}}}
	good.Name = "ok"
	if err := good.Validate(); err != nil {
		t.Errorf("valid app: %v", err)
	}
	p := &AppProject{Spec: AppProjectSpec{SyncWindows: []SyncWindow{{Kind: "sometimes", Schedule: "x", Duration: "1h"}}}}
	p.Name = "p"
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "spec.syncWindows[0].kind") || !strings.Contains(err.Error(), "spec.syncWindows[0].schedule") {
		t.Errorf("project Validate = %v", err)
	}
	// A sourceNamespaces expression Argo CD's regexp2 reads and RE2 does
	// not (a lookbehind) is refused by name; globs and RE2 expressions pass.
	p = &AppProject{Spec: AppProjectSpec{SourceNamespaces: []string{"team-*", "/^ops-[0-9]+$/", "/(?<=a)b/"}}}
	p.Name = "p"
	if err := p.Validate(); !errors.As(err, &ve) || !strings.Contains(err.Error(), "spec.sourceNamespaces[2]") ||
		strings.Contains(err.Error(), "spec.sourceNamespaces[1]") || strings.Contains(err.Error(), "spec.sourceNamespaces[0]") {
		t.Errorf("project Validate = %v, want spec.sourceNamespaces[2] refused alone", err)
	}
}

// TestEmptyStatusIsNotWritten: an Application without status marshals
// without a status field, as a manifest in Git would read.
func TestEmptyStatusIsNotWritten(t *testing.T) {
	a := Application{Spec: ApplicationSpec{Source: &ApplicationSource{RepoURL: "https://x/r.git"}}}
	out, err := yaml.Marshal(&a)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "status") || strings.Contains(string(out), "operation") {
		t.Errorf("empty status written:\n%s", out)
	}
}

// TestApplicationSetStatusLoads: an ApplicationSet as kubectl prints it,
// with Argo CD's status, loads; the status is kept, and a field of spec
// unknown to Argo CD is still refused by name.
func TestApplicationSetStatusLoads(t *testing.T) {
	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: guestbook, namespace: argocd, generation: 3, uid: 0d6c1f52-9a1c-4a8e-b7f4-3c2d1e0f9a8b}
spec:
  generators:
  - list: {elements: [{cluster: dev}]}
  template:
    metadata: {name: '{{cluster}}-guestbook'}
    spec: {project: default, source: {repoURL: https://x/r.git}, destination: {server: https://k}}
status:
  conditions:
  - {type: ResourcesUpToDate, status: "True", reason: ApplicationSetUpToDate, message: All applications have been generated successfully, lastTransitionTime: "2026-12-01T08:00:00Z"}
  resources:
  - {group: argoproj.io, version: v1alpha1, kind: Application, namespace: argocd, name: dev-guestbook, status: Synced, health: {status: Healthy}}
  resourcesCount: 1
  someFutureField: {}
`
	sets, err := LoadApplicationSets(strings.NewReader(set))
	if err != nil {
		t.Fatal(err)
	}
	st := sets[0].Status
	if len(st.Conditions) != 1 || st.Conditions[0].Reason != "ApplicationSetUpToDate" || len(st.Resources) != 1 || st.ResourcesCount != 1 {
		t.Errorf("status = %+v", st)
	}
	_, err = LoadApplicationSets(strings.NewReader(strings.Replace(set, "  generators:", "  preservedFieldz: {}\n  generators:", 1)))
	var le *LoadError
	if !errors.As(err, &le) || le.Path != "spec.preservedFieldz" {
		t.Errorf("unknown spec field: %v", err)
	}
}

// TestApplicationSetCloneProtocolLoads: an scmProvider's cloneProtocol
// (ssh or https clone URLs) is Argo CD's field the providers honour, so a
// set with it loads and keeps it.
func TestApplicationSetCloneProtocolLoads(t *testing.T) {
	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: repos}
spec:
  generators:
  - scmProvider:
      github: {organization: example}
      cloneProtocol: https
  template:
    metadata: {name: '{{repository}}'}
    spec: {}
`
	sets, err := LoadApplicationSets(strings.NewReader(set))
	if err != nil {
		t.Fatal(err)
	}
	if got := sets[0].Spec.Generators[0].SCMProvider.CloneProtocol; got != "https" {
		t.Fatalf("cloneProtocol = %q, want https", got)
	}
}
