package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
)

// TestEngineFlagsSetTheEngineOptions: the flags that reproduce a host's
// configuration reach the engine's options.
func TestEngineFlagsSetTheEngineOptions(t *testing.T) {
	var ef engineFlags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ef.register(fs)
	script := filepath.Join(t.TempDir(), "cm.lua")
	if err := os.WriteFile(script, []byte(`return {status = "Degraded", message = "from --health-lua"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--ref-cache-ttl", "7s", "--recreate-on-immutable", "--health-lua", "ConfigMap=" + script, "--state-namespace", ""}); err != nil {
		t.Fatal(err)
	}
	opts := gitops.DefaultOptions()
	if err := ef.apply(&opts, nil); err != nil {
		t.Fatal(err)
	}
	if opts.RefCacheTTL != 7*time.Second || !opts.Sync.RecreateOnImmutable || ef.healthLua["ConfigMap"] == "" {
		t.Fatalf("options: ttl %s recreate %v lua %v", opts.RefCacheTTL, opts.Sync.RecreateOnImmutable, ef.healthLua)
	}
	if err := fs.Parse([]string{"--health-lua", "ConfigMap=/does/not/exist"}); err == nil {
		t.Fatal("a missing script file was accepted")
	}
	if err := fs.Parse([]string{"--health-lua", "no-equals-sign"}); err == nil {
		t.Fatal("a malformed --health-lua was accepted")
	}
}

// TestHealthLuaFlagJudges: --health-lua's script judges the kind's health
// in status, as a host's Lua override would.
func TestHealthLuaFlagJudges(t *testing.T) {
	ns := cluster.TestNamespace(t)
	appFile, _ := appFixture(t, ns)
	script := filepath.Join(t.TempDir(), "cm.lua")
	if err := os.WriteFile(script, []byte(`return {status = "Suspended", message = "from --health-lua"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--app", appFile, "--kubeconfig", cluster.Kubeconfig(), "--state-namespace", ns}
	if code, out, errOut := runCLI(t, append([]string{"sync"}, flags...)...); code != 0 {
		t.Fatalf("sync: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := runCLI(t, append([]string{"status", "--health-lua", "ConfigMap=" + script}, flags...)...)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	mustContain(t, "status with --health-lua", out, "Suspended", "from --health-lua")
	bad := filepath.Join(t.TempDir(), "bad.lua")
	if err := os.WriteFile(bad, []byte(`return (`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, append([]string{"status", "--health-lua", "ConfigMap=" + bad}, flags...)...); code != 2 {
		t.Fatalf("a script that does not compile: exit %d, want 2\n%s", code, errOut)
	}
}
