package reftools

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestToolsBuildAndReportTheirVersions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	for tool, want := range map[Tool]string{Helm: "v3.22.0", Kustomize: "v5.8.2"} {
		path, err := Ensure(ctx, tool)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(ctx, path, "version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s version: %v\n%s", tool, err, out)
		}
		if !strings.Contains(string(out), want) {
			t.Errorf("%s version = %q, want %s", tool, out, want)
		}
	}
	if _, err := Ensure(ctx, "kubectl"); err == nil {
		t.Error("unknown tool accepted")
	}
}
