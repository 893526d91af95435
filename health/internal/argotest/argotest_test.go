package argotest

import (
	"errors"
	"io/fs"
	"slices"
	"testing"
	"testing/fstest"
)

var errNoTests = errors.New("no cases")

func TestSuiteFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"a/K/health.lua":           {Data: []byte("x")},
		"a/K/health_test.yaml":     {Data: []byte("tests: [{inputPath: in.yaml}]\n")},
		"a/K/in.yaml":              {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")},
		"a/K/two.yaml":             {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\n")},
		"b/L/health.lua":           {Data: []byte("x")},
		"b/L/health_test.yaml":     {Data: []byte("tests: []\n")},
		"b/L/actions/discovery.lu": {Data: []byte("x")},
	}
	dirs, err := Folders(fsys, func(_ string, d fs.DirEntry) bool { return d.Name() == "health.lua" })
	if err != nil || !slices.Equal(dirs, []string{"a/K", "b/L"}) {
		t.Fatalf("Folders = %v, %v", dirs, err)
	}
	var file struct {
		Tests []struct {
			InputPath string `json:"inputPath"`
		} `json:"tests"`
	}
	cases := func() int { return len(file.Tests) }
	if err := ReadTests(fsys, "a/K/health_test.yaml", &file, cases, errNoTests); err != nil || file.Tests[0].InputPath != "in.yaml" {
		t.Errorf("ReadTests = %v, %+v", err, file)
	}
	if err := ReadTests(fsys, "b/L/health_test.yaml", &file, cases, errNoTests); !errors.Is(err, errNoTests) || err.Error() != "b/L/health_test.yaml: no cases" {
		t.Errorf("no cases: %v", err)
	}
	if err := ReadTests(fsys, "c/M/health_test.yaml", &file, cases, errNoTests); !errors.Is(err, errNoTests) {
		t.Errorf("no file: %v", err)
	}
	if obj, err := ReadObject(fsys, "a/K", "in.yaml", "a/K"); err != nil || obj.GetName() != "c" {
		t.Errorf("ReadObject = %v, %v", obj, err)
	}
	if _, err := ReadObject(fsys, "a/K", "two.yaml", ""); err == nil || err.Error() != "two.yaml: want one object, found 2" {
		t.Errorf("two objects: %v", err)
	}
	if _, err := ReadObject(fsys, "a/K", "../../b/L/health.lua", "a/K"); err == nil || err.Error() != `inputPath "b/L/health.lua" leaves the tested folder` {
		t.Errorf("outside the folder: %v", err)
	}
	if _, err := CaseFile("expectedOutputPath", "a/K", "", ""); err == nil || err.Error() != "expectedOutputPath is empty" {
		t.Errorf("empty: %v", err)
	}
}
