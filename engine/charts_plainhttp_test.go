package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/source/helmrepo"
	"github.com/kubegitops/gitops/source/repocreds"
)

// A chart registry that serves plain HTTP, through a chart source that
// speaks HTTPS (the default): Argo CD's repository Secret field
// insecureOCIForceHttp makes the chart render, whether the app names the
// registry with oci:// or not; without it the error says the registry
// speaks plain HTTP and names the field.
func TestChartFromPlainHTTPRegistryNeedsInsecureOCIForceHTTP(t *testing.T) {
	t.Parallel()
	reg := chartserver.NewRegistry(t, chartUser, chartPassword)
	reg.Push("charts", chartserver.WebChart(t, "web", "1.0.0"))
	secret := func(force string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: local-charts\n  namespace: argocd\n"+
			"  labels: {argocd.argoproj.io/secret-type: repository}\nstringData:\n  url: %s/charts\n  type: oci\n"+
			"  username: %s\n  password: %s\n%s", reg.Host, chartUser, chartPassword, force)
	}
	render := func(force, repoURL string) (int, error) {
		store, err := repocreds.Load("secrets.yaml", []byte(secret(force)))
		if err != nil {
			t.Fatal(err)
		}
		e := offlineEngine(t, func(o *Options) {
			hopts := helmrepo.DefaultOptions()
			hopts.CacheDir = t.TempDir() // and PlainHTTP false, as in production
			s, err := helmrepo.New(hopts)
			if err != nil {
				t.Fatal(err)
			}
			o.ChartSource = s
			o.Credentials = store.For
		})
		app := &Application{Spec: ApplicationSpec{
			Source:      &ApplicationSource{RepoURL: repoURL, Chart: "web", TargetRevision: "1.0.x"},
			Destination: ApplicationDestination{Name: "prod", Namespace: "shop"},
		}}
		app.Name = "plain-http"
		objs, rev, err := e.Render(context.Background(), app)
		if err == nil && rev != "1.0.0" {
			t.Errorf("revision %q, want 1.0.0", rev)
		}
		return len(objs), err
	}
	_, err := render("", reg.Host+"/charts")
	if !errors.Is(err, helmrepo.ErrPlainHTTPRegistry) || !strings.Contains(err.Error(), "insecureOCIForceHttp") || strings.Contains(err.Error(), chartPassword) {
		t.Fatalf("without insecureOCIForceHttp: %v, want ErrPlainHTTPRegistry naming the field", err)
	}
	n, err := render("  insecureOCIForceHttp: \"true\"\n", reg.Host+"/charts")
	if err != nil || n != 2 {
		t.Fatalf("with insecureOCIForceHttp: %d objects, %v", n, err)
	}
	// The app names the registry with oci://, the Secret without: Argo CD
	// matches the two forms, so the Secret's insecureOCIForceHttp (and
	// credentials) apply, and no error tells the user to set what the
	// Secret already sets.
	n, err = render("  insecureOCIForceHttp: \"true\"\n", "oci://"+reg.Host+"/charts")
	if err != nil || n != 2 {
		t.Fatalf("an oci:// app URL with a scheme-less Secret: %d objects, %v", n, err)
	}
}
