package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/rendertest"
)

func tree() *rendertest.Snapshot {
	return rendertest.NewSnapshot(fstest.MapFS{
		"apps/a/cm.yaml":     {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-file\n")},
		"apps/a/sub/x.txt":   {Data: []byte("x")},
		"other/secret.yaml":  {Data: []byte("password: hunter2")},
		"apps/evil/cm.yaml":  {Data: []byte("x")},
		"apps/evil/escape":   {Data: []byte("../../other/secret.yaml"), Mode: os.ModeSymlink},
		"apps/evil/absolute": {Data: []byte("/etc/passwd"), Mode: os.ModeSymlink},
	})
}

// sh returns a plugin that runs script with /bin/sh.
func sh(script string) Plugin {
	return Plugin{Command: []string{"/bin/sh", "-c", script}, Timeout: 20 * time.Second}
}

func renderWith(t *testing.T, opts Options, in render.Input) ([]*unstructured.Unstructured, error) {
	t.Helper()
	if opts.TempDir == "" {
		opts.TempDir = t.TempDir()
	}
	return New(opts).Render(context.Background(), in)
}

// envConfigMap prints the plugin's environment as a ConfigMap.
const envConfigMap = `printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: env\ndata:\n'; env | sort | while IFS='=' read -r k v; do printf '  %s: "%s"\n' "$k" "$v"; done`

func envOf(t *testing.T, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	if len(objs) != 1 {
		t.Fatalf("got %d objects", len(objs))
	}
	data, _, _ := unstructured.NestedStringMap(objs[0].Object, "data")
	return data
}

func TestPluginRendersTheCopy(t *testing.T) {
	opts := Options{Plugins: map[string]Plugin{"cat": sh("cat cm.yaml; test -f sub/x.txt")}}
	objs, err := renderWith(t, opts, render.Input{FS: tree(), Path: "apps/a", Plugin: &render.PluginSource{Name: "cat"}})
	if err != nil || len(objs) != 1 || objs[0].GetName() != "from-file" {
		t.Fatalf("objs %v, err %v", objs, err)
	}
	if _, err := renderWith(t, opts, render.Input{FS: tree(), Path: "apps/a", Plugin: &render.PluginSource{Name: "nope"}}); !errors.Is(err, ErrUnknownPlugin) {
		t.Fatalf("unknown plugin: %v", err)
	}
}

// TestS17EnvironmentIsAnAllowlistAndCredentialsNeedAGrant: host variables
// do not leak, credentials are passed only when granted, Argo's build
// variables are set.
func TestS17EnvironmentIsAnAllowlistAndCredentialsNeedAGrant(t *testing.T) {
	t.Setenv("HOST_SECRET", "leaked-host-secret")
	t.Setenv("ALLOWED_VAR", "ok")
	p := sh(envConfigMap)
	p.Env = []string{"ALLOWED_VAR"}
	p.Credentials = map[string]string{"GIT_TOKEN": "ghp_supersecret"}
	in := render.Input{FS: tree(), Path: "apps/a", AppName: "demo", Namespace: "prod", KubeVersion: "1.37.2", APIVersions: []string{"v1", "apps/v1"},
		Plugin: &render.PluginSource{Name: "env", Env: map[string]string{"FOO": "bar"}}}
	objs, err := renderWith(t, Options{Plugins: map[string]Plugin{"env": p}}, in)
	if err != nil {
		t.Fatal(err)
	}
	env := envOf(t, objs)
	if _, ok := env["HOST_SECRET"]; ok {
		t.Error("a host variable outside the allowlist reached the plugin")
	}
	if _, ok := env["GIT_TOKEN"]; ok {
		t.Error("credentials reached the plugin without a grant")
	}
	want := map[string]string{"ALLOWED_VAR": "ok", "ARGOCD_APP_NAME": "demo", "ARGOCD_APP_NAMESPACE": "prod", "ARGOCD_ENV_FOO": "bar", "KUBE_VERSION": "1.37.2", "KUBE_API_VERSIONS": "v1,apps/v1"}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	// The engine's build environment reaches the plugin as it is.
	withBuild := in
	withBuild.Plugin = &render.PluginSource{Name: "env", BuildEnv: map[string]string{"ARGOCD_APP_REVISION": "abc123", "ARGOCD_APP_NAME": "from-engine"}}
	objs, err = renderWith(t, Options{Plugins: map[string]Plugin{"env": p}}, withBuild)
	if err != nil {
		t.Fatal(err)
	}
	if env := envOf(t, objs); env["ARGOCD_APP_REVISION"] != "abc123" || env["ARGOCD_APP_NAME"] != "from-engine" {
		t.Errorf("build environment: revision %q, name %q", env["ARGOCD_APP_REVISION"], env["ARGOCD_APP_NAME"])
	}
	p.GrantCredentials = true
	objs, err = renderWith(t, Options{Plugins: map[string]Plugin{"env": p}}, in)
	if err != nil {
		t.Fatal(err)
	}
	if envOf(t, objs)["GIT_TOKEN"] != "ghp_supersecret" {
		t.Error("granted credentials did not reach the plugin")
	}
}

func TestS17CredentialsAreMaskedInErrors(t *testing.T) {
	p := sh(`echo "auth failed with $GIT_TOKEN" >&2; exit 3`)
	p.Credentials = map[string]string{"GIT_TOKEN": "ghp_supersecret"}
	p.GrantCredentials = true
	_, err := renderWith(t, Options{Plugins: map[string]Plugin{"p": p}}, render.Input{FS: tree(), Path: "apps/a", Plugin: &render.PluginSource{Name: "p"}})
	if err == nil || strings.Contains(err.Error(), "ghp_supersecret") || !strings.Contains(err.Error(), "auth failed with ***") {
		t.Fatalf("error = %v; want the stderr tail with the credential masked", err)
	}
	id, _ := New(Options{Plugins: map[string]Plugin{"p": p}}).Identity(render.Input{})
	if strings.Contains(fmt.Sprintf("%+v", id.Options), "ghp_supersecret") {
		t.Fatal("a credential value is in the cache identity")
	}
}

func TestS17TimeoutKillsThePlugin(t *testing.T) {
	p := sh("sleep 30 & sleep 30")
	p.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := renderWith(t, Options{Plugins: map[string]Plugin{"slow": p}}, render.Input{FS: tree(), Path: "apps/a", Plugin: &render.PluginSource{Name: "slow"}})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("the render waited %v for a plugin with a 300ms timeout", time.Since(start))
	}
}

func TestS17OutputIsCapped(t *testing.T) {
	p := sh("yes apiVersion")
	p.MaxOutputBytes = 1 << 20
	_, err := renderWith(t, Options{Plugins: map[string]Plugin{"yes": p}}, render.Input{FS: tree(), Path: "apps/a", Plugin: &render.PluginSource{Name: "yes"}})
	if !errors.Is(err, ErrOutputTooLarge) || !errors.Is(err, render.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrOutputTooLarge", err)
	}
}

// TestS4EachRenderGetsAPrivateRandomDirectory: the working directory is
// fresh, random, 0700, outside the source tree, gone afterwards, and a
// symlink out of the tree is not copied in.
func TestS4EachRenderGetsAPrivateRandomDirectory(t *testing.T) {
	parent := t.TempDir()
	p := sh(`d=$(pwd); top=$(dirname "$d"); printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wd\ndata:\n  dir: "%s"\n  mode: "%s"\n' "$d" "$(stat -c %a "$top")"`)
	opts := Options{Plugins: map[string]Plugin{"wd": p}, TempDir: parent}
	in := render.Input{FS: tree(), Path: "apps/a", Plugin: &render.PluginSource{Name: "wd"}}
	seen := map[string]bool{}
	for i := 0; i < 2; i++ {
		objs, err := New(opts).Render(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		data := envOf(t, objs)
		if data["mode"] != "700" {
			t.Errorf("work directory mode %s, want 700", data["mode"])
		}
		if seen[data["dir"]] || !strings.HasPrefix(data["dir"], parent) || !strings.Contains(data["dir"], "gitops-plugin-") {
			t.Errorf("work directory %q is reused or not private", data["dir"])
		}
		seen[data["dir"]] = true
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("work directories left behind: %d", len(entries))
	}
	_, err := New(opts).Render(context.Background(), render.Input{FS: tree(), Path: "apps/evil", Plugin: &render.PluginSource{Name: "wd"}})
	if !errors.Is(err, render.ErrOutsideRoot) && !errors.Is(err, render.ErrAbsolutePath) {
		t.Fatalf("copying a tree with escaping links: %v, want a typed refusal", err)
	}
}

// TestS5CleanupSurvivesHostilePermissions: a plugin that leaves a 0000
// file and a directory without x (and fails) is still cleaned up.
func TestS5CleanupSurvivesHostilePermissions(t *testing.T) {
	parent := t.TempDir()
	p := sh(`mkdir -p locked/inner && touch locked/inner/f && chmod 000 locked/inner/f && chmod 000 locked/inner && chmod 0400 locked && touch zero && chmod 000 zero; exit 1`)
	_, err := New(Options{Plugins: map[string]Plugin{"p": p}, TempDir: parent}).Render(context.Background(), render.Input{FS: tree(), Path: "apps/a", Plugin: &render.PluginSource{Name: "p"}})
	if err == nil {
		t.Fatal("the failing plugin did not fail the render")
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Fatalf("cleanup left %d entries behind", len(entries))
	}
}

func TestS5CopyObeysTheFileBudget(t *testing.T) {
	files := fstest.MapFS{}
	for i := 0; i < 50; i++ {
		files["apps/many/f"+string(rune('a'+i%26))+strings.Repeat("x", i)] = &fstest.MapFile{Data: []byte("x")}
	}
	opts := Options{Plugins: map[string]Plugin{"p": sh("true")}, Limits: render.Limits{MaxFiles: 10}, TempDir: t.TempDir()}
	_, err := New(opts).Render(context.Background(), render.Input{FS: rendertest.NewSnapshot(files), Path: "apps/many", Plugin: &render.PluginSource{Name: "p"}})
	if !errors.Is(err, render.ErrTooManyFiles) {
		t.Fatalf("err = %v, want ErrTooManyFiles", err)
	}
}

// TestS18PluginOptionsMissTheCache walks Options and every field of a
// Plugin (command, env allowlist, credentials, grant, timeout, cap).
func TestS18PluginOptionsMissTheCache(t *testing.T) {
	basePlugin := Plugin{Command: []string{"/bin/sh"}, Env: []string{"A"}, Credentials: map[string]string{"T": "v"}, Timeout: time.Second, MaxOutputBytes: 10}
	base := Options{Plugins: map[string]Plugin{"p": basePlugin}, Limits: render.DefaultLimits(), TempDir: "/tmp"}
	in := render.Input{FS: tree(), Path: "apps/a", Plugin: &render.PluginSource{Name: "p"}}
	baseKey := rendertest.IdentityKey(t, New(base), in)
	muts, skipped := rendertest.Mutations(base)
	pmuts, pskipped := rendertest.Mutations(basePlugin)
	if len(skipped)+len(pskipped) != 0 {
		t.Fatalf("fields the walker cannot change: %v %v", skipped, pskipped)
	}
	for _, m := range pmuts {
		o := base
		o.Plugins = map[string]Plugin{"p": m.Value.(Plugin)}
		muts = append(muts, rendertest.Mutation{Field: "Plugins[p]." + m.Field, Value: o})
	}
	changed := base
	changed.Plugins = map[string]Plugin{"p": {Command: basePlugin.Command, Env: basePlugin.Env, Credentials: map[string]string{"T": "rotated"}, Timeout: time.Second, MaxOutputBytes: 10}}
	muts = append(muts, rendertest.Mutation{Field: "Plugins[p].Credentials[T] value", Value: changed})
	for _, m := range muts {
		if rendertest.IdentityKey(t, New(m.Value.(Options)), in) == baseKey {
			t.Errorf("changing Options.%s does not change the cache key", m.Field)
		}
	}
}

// TestPluginParametersAsArgoCDPassesThem: an application's plugin
// parameters reach the plugin as ARGOCD_APP_PARAMETERS (JSON) and
// PARAM_* variables, as Argo CD's config management plugins get them.
func TestPluginParametersAsArgoCDPassesThem(t *testing.T) {
	// As envConfigMap, with single-quoted values: the JSON holds quotes.
	p := sh(`printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: env\ndata:\n'; env | sort | while IFS='=' read -r k v; do printf "  %s: '%s'\n" "$k" "$v"; done`)
	str := "3"
	in := render.Input{FS: tree(), Path: "apps/a", AppName: "demo", Namespace: "prod",
		Plugin: &render.PluginSource{Name: "env", Parameters: []render.PluginParameter{
			{Name: "replica-count", String: &str},
			{Name: "regions", Array: []string{"eu", "us"}},
			{Name: "labels", Map: map[string]string{"team.name": "web"}},
		}}}
	objs, err := renderWith(t, Options{Plugins: map[string]Plugin{"env": p}}, in)
	if err != nil {
		t.Fatal(err)
	}
	env := envOf(t, objs)
	want := map[string]string{"PARAM_REPLICA_COUNT": "3", "PARAM_REGIONS_0": "eu", "PARAM_REGIONS_1": "us", "PARAM_LABELS_TEAM_NAME": "web"}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if !strings.Contains(env["ARGOCD_APP_PARAMETERS"], `"name":"regions","array":["eu","us"]`) {
		t.Errorf("ARGOCD_APP_PARAMETERS = %s", env["ARGOCD_APP_PARAMETERS"])
	}
}
