package reftools

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestToolsBuildAndReportTheirVersions(t *testing.T) {
	for tool, want := range map[Tool]string{Helm: "v3.22.0", Kustomize: "v5.8.2"} {
		path := ForTest(t, tool)
		// A deadline on running the tool, never on building it.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, path, "version").CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s version: %v\n%s", tool, err, out)
		}
		if !strings.Contains(string(out), want) {
			t.Errorf("%s version = %q, want %s", tool, out, want)
		}
	}
	if _, err := Path(context.Background(), "kubectl"); err == nil || !strings.Contains(err.Error(), `"kubectl"`) {
		t.Errorf("unknown tool: %v", err)
	}
}

// Once built, a tool is found: Ensure builds nothing (it logs every
// build), whatever the deadline of its caller.
func TestBuiltToolsAreFound(t *testing.T) {
	ForTest(t, Helm)
	var built []string
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a finding needs no time at all
	if _, err := Ensure(ctx, func(f string, a ...any) { built = append(built, f) }, Helm); err != nil || len(built) != 0 {
		t.Fatalf("a built tool: %v, builds %v", err, built)
	}
}
