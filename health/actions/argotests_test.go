package actions

import (
	"context"
	"os"
	"testing"
)

// TestArgoCDActionTests runs Argo CD's own action tests (testdata/argocd,
// see its README) and asserts every case passes, as it does in Argo CD.
func TestArgoCDActionTests(t *testing.T) {
	report, err := RunTests(context.Background(), os.DirFS("testdata/argocd"), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if report.Folders != 38 {
		t.Errorf("want 38 actions folders, found %d", report.Folders)
	}
	if len(report.Results) < 150 {
		t.Errorf("want at least 150 cases, found %d", len(report.Results))
	}
	for _, r := range report.Failed() {
		t.Error(r)
	}
}
