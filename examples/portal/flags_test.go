package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagsRefuseByName checks that --operator is refused by name and that
// a missing required flag is named.
func TestFlagsRefuseByName(t *testing.T) {
	if _, err := parseFlags([]string{"--operator", "--apps", "x"}, io.Discard); !errors.Is(err, errOperatorMode) {
		t.Errorf("--operator: %v, want errOperatorMode", err)
	}
	for args, want := range map[string]string{
		"":                                   "--apps",
		"--apps d":                           "--policy",
		"--apps d --policy p":                "--token-file",
		"--apps d --policy p --token-file t": "--kubeconfig",
	} {
		t.Setenv("KUBECONFIG", "")
		if _, err := parseFlags(strings.Fields(args), io.Discard); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %s", args, err, want)
		}
	}
}

// TestBadTokenAndPolicyFiles checks that bad lines are refused naming the
// line and the user, never the token.
func TestBadTokenAndPolicyFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for text, want := range map[string]string{
		"short-token-1 alice g\n":                            "line 1 (user alice): token shorter",
		"# c\nonly-one-field-here-long\n":                    "line 2: want TOKEN USER",
		"same-token-0123456789 a\nsame-token-0123456789 b\n": "line 2 (user b): token already given",
	} {
		_, err := loadTokenFile(write("t.txt", text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), "short-token-1") || strings.Contains(err.Error(), "same-token")) {
			t.Errorf("the error shows the token: %v", err)
		}
	}
	for text, want := range map[string]string{
		"rules:\n  - {group: a, role: owner}\n": `role "owner" is neither`,
		"rules:\n  - {role: admin}\n":           "group is required",
		"rulez: []\n":                           "unknown field",
	} {
		if _, err := loadPolicy(write("p.yaml", text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
	p, err := loadPolicyText(fixturePolicy)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.permsFor([]string{"readers-a"}, "team-b"); got.Read {
		t.Errorf("readers-a in team-b: %+v", got)
	}
	if got := p.permsFor([]string{"admins-a", "readers-a"}, "team-a"); !got.Write || got.Secrets {
		t.Errorf("admins-a in team-a: %+v", got)
	}
}

// TestFlagsRBACAndTLS checks the refusals of --rbac-cm, --tls-cert and
// --trusted-proxies, and that a bad argocd-rbac-cm names its file and line.
func TestFlagsRBACAndTLS(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	base := "--apps d --token-file t --kubeconfig k "
	for args, want := range map[string]string{
		base + "--policy p --rbac-cm r":                              "--policy and --rbac-cm",
		base + "--rbac-cm r --oidc-groups-claim roles":               "--oidc-groups-claim",
		base + "--policy p --rbac-namespace argocd":                  "--rbac-namespace exclude each other",
		base + "--rbac-namespace argocd --oidc-groups-claim roles":   "--oidc-groups-claim",
		base + "--policy p --tls-cert c":                             "--tls-cert and --tls-key",
		base + "--policy p --trusted-proxies 10.0.0.0/33":            "--trusted-proxies",
		base + "--policy p --projects f --projects-namespace argocd": "--projects and --projects-namespace exclude each other",
	} {
		if _, err := parseFlags(strings.Fields(args), io.Discard); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %s", args, err, want)
		}
	}
	f, err := parseFlags(strings.Fields(base+"--rbac-cm r --tls-cert c --tls-key k --trusted-proxies 10.0.0.0/8,192.0.2.7"), io.Discard)
	if err != nil || f.rbacCM != "r" || len(f.trustedProxies) != 2 || f.trustedProxies[1].String() != "192.0.2.7/32" {
		t.Errorf("good flags: %+v %v", f, err)
	}
	dir := t.TempDir()
	for text, want := range map[string]string{
		"apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n":                                                                           `kind "Secret"`,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-rbac-cm}\ndata:\n  policy.csv: |\n    p, role:x, applications, get\n": "policy.csv line 1",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-rbac-cm}\ndata:\n  policy.csvv: x\n":                                  "policy.csvv",
	} {
		file := filepath.Join(dir, "cm.yaml")
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := loadRBACConfigMap(file); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), file) {
			t.Errorf("%q: %v, want an error naming %s and the file", text, err, want)
		}
	}
}
