package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/argocdcm"
	"github.com/kubegitops/gitops/examples/operator/appsets"
)

// TestAppSetSCMParams: the ApplicationSet controller's SCM keys of
// argocd-cmd-params-cm reach the generators' SCM policy and the providers'
// options (enable.scm.providers, allowed.scm.providers,
// enable.tokenref.strict.mode, scm.root.ca.path's certificates), and a
// root CA file that cannot be read is an error naming the key.
func TestAppSetSCMParams(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	if err := os.WriteFile(ca, []byte(pem), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := argocdcm.ParseParams(map[string]string{
		"applicationsetcontroller.enable.scm.providers":        "false",
		"applicationsetcontroller.allowed.scm.providers":       "https://git.example.com/, https://gitlab.example.com/",
		"applicationsetcontroller.enable.tokenref.strict.mode": "true",
		"applicationsetcontroller.scm.root.ca.path":            ca,
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := appsets.DefaultOptions()
	if err := appSetOptions(&opts, p); err != nil {
		t.Fatal(err)
	}
	if !opts.Generate.SCM.Disabled || !slices.Equal(opts.Generate.SCM.AllowedAPIs, []string{"https://git.example.com/", "https://gitlab.example.com/"}) {
		t.Errorf("SCM policy %+v", opts.Generate.SCM)
	}
	if !opts.Providers.TokenRefStrict || string(opts.Providers.RootCAPEM) != pem {
		t.Errorf("providers' options: strict %v, root CA %q", opts.Providers.TokenRefStrict, opts.Providers.RootCAPEM)
	}

	opts = appsets.DefaultOptions()
	if err := appSetOptions(&opts, &argocdcm.Params{}); err != nil || opts.Generate.SCM.Disabled {
		t.Errorf("no keys: %v, SCM policy %+v (Argo CD enables SCM providers by default)", err, opts.Generate.SCM)
	}

	p.AppSets.SCMRootCAPath = filepath.Join(t.TempDir(), "missing.pem")
	err = appSetOptions(&opts, p)
	if err == nil || !strings.Contains(err.Error(), "applicationsetcontroller.scm.root.ca.path") {
		t.Errorf("a missing root CA file: %v", err)
	}
}
