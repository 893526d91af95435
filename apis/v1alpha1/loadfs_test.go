package v1alpha1

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func appManifest(name string) string {
	return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: " + name + "}\n" +
		"spec:\n  source: {repoURL: /repo, path: .}\n  destination: {server: " + KubernetesInternalAPIServerAddr + ", namespace: default}\n"
}

// A folder of Application files: the good ones load in file order, and each
// bad file is one *FileError naming it (and the line of a decoding error),
// returned beside the Applications that loaded.
func TestLoadApplicationsFS(t *testing.T) {
	fsys := fstest.MapFS{
		"apps/a.yaml":       {Data: []byte(appManifest("a"))},
		"apps/b.YML":        {Data: []byte(appManifest("b"))},
		"apps/README.md":    {Data: []byte("# not an app")},
		"apps/sub/x.yaml":   {Data: []byte(appManifest("x"))},
		"apps/c-dup.json":   {Data: []byte(appManifest("a"))},
		"apps/d-bad.yaml":   {Data: []byte(appManifest("d") + "  bogus: 1\n")},
		"apps/e-empty.yaml": {Data: []byte("# nothing\n")},
		"empty/notes.txt":   {Data: []byte("x")},
	}
	apps, err := LoadApplicationsFS(fsys, "apps")
	var names []string
	for _, a := range apps {
		names = append(names, a.Name)
	}
	if strings.Join(names, ",") != "a,b" {
		t.Errorf("loaded %v, want a,b (the files that load, sub folders not read)", names)
	}
	var bad []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *FileError
		if !errors.As(e, &fe) {
			t.Fatalf("%v is not a *FileError", e)
		}
		bad = append(bad, fe.File)
		if !strings.HasPrefix(e.Error(), fe.File+": ") {
			t.Errorf("%q does not start with its file", e)
		}
	}
	if got := strings.Join(bad, ","); got != "apps/c-dup.json,apps/d-bad.yaml,apps/e-empty.yaml" {
		t.Errorf("bad files %s", got)
	}
	for _, want := range []string{`apps/c-dup.json: application "a" is defined in apps/a.yaml and in apps/c-dup.json`,
		"apps/d-bad.yaml: document 0 line 7: spec.bogus: unknown field", "apps/e-empty.yaml: no Application found"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	var le *LoadError
	if !errors.As(err, &le) || le.Line != 7 {
		t.Errorf("the decoding error is not a *LoadError of line 7: %#v", le)
	}

	one, err := LoadApplicationsFS(fsys, "apps/b.YML")
	if err != nil || len(one) != 1 || one[0].Name != "b" {
		t.Errorf("one file: %v, %v", one, err)
	}
	var fe *FileError
	if _, err := LoadApplicationsFS(fsys, "empty"); !errors.Is(err, ErrNoManifests) || !errors.As(err, &fe) || err.Error() != "empty: no .yaml, .yml or .json file" {
		t.Errorf("folder without manifests: %v", err)
	}
	if apps, err := LoadApplicationsFS(fsys, "missing"); !errors.Is(err, fs.ErrNotExist) || err.Error() != "missing: file does not exist" || apps != nil {
		t.Errorf("missing: %v, %v", apps, err)
	}
}

// An Application as an unstructured object has its apiVersion and kind,
// and its fields as the converter writes them (int64 numbers).
func TestApplicationToUnstructured(t *testing.T) {
	limit := int64(3)
	app := &Application{Spec: ApplicationSpec{Project: "team",
		Destination: ApplicationDestination{Server: KubernetesInternalAPIServerAddr, Namespace: "web"},
		SyncPolicy:  &SyncPolicy{Retry: &RetryStrategy{Limit: limit}}}}
	app.Name, app.Namespace = "web", "argocd"
	u, err := ApplicationToUnstructured(app)
	if err != nil {
		t.Fatal(err)
	}
	if u.GetAPIVersion() != "argoproj.io/v1alpha1" || u.GetKind() != "Application" || u.GetNamespace() != "argocd" || u.GetName() != "web" {
		t.Errorf("identity: %s %s %s/%s", u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName())
	}
	if got, _, _ := unstructured.NestedInt64(u.Object, "spec", "syncPolicy", "retry", "limit"); got != limit {
		t.Errorf("spec.syncPolicy.retry.limit = %v", u.Object["spec"])
	}
	if got, _, _ := unstructured.NestedString(u.Object, "spec", "destination", "server"); got != KubernetesInternalAPIServerAddr {
		t.Errorf("spec.destination.server = %q", got)
	}
}
