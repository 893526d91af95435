package health

import (
	"testing"
	"testing/fstest"
)

func TestLoadScripts_ArgoLayout(t *testing.T) {
	fsys := fstest.MapFS{
		"apps/Deployment/health.lua":            {Data: []byte("return {status = 'Healthy'}")},
		"_.crossplane.io/_/health.lua":          {Data: []byte("return {status = 'Progressing'}")},
		"apps/Deployment/health_test.yaml":      {Data: []byte("tests: []")},
		"apps/Deployment/actions/discovery.lua": {Data: []byte("return {}")},
		"README.md":                             {Data: []byte("not a script")},
	}
	got, err := LoadScripts(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["apps/Deployment"] == "" || got["*.crossplane.io/*"] == "" {
		t.Fatalf("got keys %v", got)
	}
	// They work as overrides.
	if _, err := NewChecker(Options{Overrides: got}); err != nil {
		t.Fatal(err)
	}
}
