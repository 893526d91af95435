package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/kubegitops/gitops/cache/kubeconfig"
	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/helmrepo"
	"github.com/kubegitops/gitops/source/repocreds"
	"github.com/kubegitops/gitops/source/webhook"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// Every public type that can hold a credential is printed with every fmt
// verb, marshalled to JSON and YAML, and logged through logr; no secret
// may come out. A new type that holds credentials belongs in this list.
func TestNoPublicTypeRevealsCredentials(t *testing.T) {
	const (
		token    = "tok-SECRET-1"
		password = "pw-SECRET-2"
		key      = "key-SECRET-3"
		hmac     = "hmac-SECRET-4"
	)
	secrets := []string{token, password, key, hmac}
	if admin := cluster.Config().BearerToken; admin != "" {
		secrets = append(secrets, admin) // the test cluster's own token
	}
	restCfg := &rest.Config{Host: "https://east:6443", BearerToken: token, Password: password, Username: "admin",
		TLSClientConfig: rest.TLSClientConfig{KeyData: []byte(key)}}
	creds := source.Credentials{Username: "git", Password: password, BearerToken: token, SSHPrivateKey: []byte(key), SSHPassphrase: hmac,
		TLSClientCertData: []byte(key), TLSClientKeyData: []byte(key), EnableOCI: true, Proxy: "http://u:" + password + "@proxy.example.com"}
	cluster := ClusterConfig{Name: "east", Server: "https://east:6443", Config: restCfg}
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{cluster}

	// A chart source that has used the credentials (basic auth on a real
	// repository with its CA, then a refused password), and the errors of
	// a chart source whose URL carries a password.
	repo := chartserver.New(t, chartserver.Options{TLS: true, Username: "git", Password: password})
	repo.Add(chartserver.WebChart(t, "web", "1.0.0"))
	hopts := helmrepo.DefaultOptions()
	hopts.CacheDir = t.TempDir()
	charts, err := helmrepo.New(hopts)
	if err != nil {
		t.Fatal(err)
	}
	good := source.Repository{URL: repo.URL, Chart: "web", Credentials: &source.Credentials{Username: "git", Password: password, CAData: repo.CAPEM}}
	if rev, err := charts.Resolve(context.Background(), good, "*"); err != nil || rev.Commit != "1.0.0" {
		t.Fatalf("resolve with credentials: %v %v", rev, err)
	}
	_, chartErr := charts.Resolve(context.Background(), source.Repository{URL: strings.Replace(repo.URL, "https://", "https://git:"+token+"@", 1), Chart: "web"}, "*")
	if chartErr == nil {
		t.Fatal("a repository with an untrusted certificate was read")
	}
	e := offlineEngine(t, func(o *Options) { o.ChartSource = charts })
	app := &Application{Spec: ApplicationSpec{Source: &ApplicationSource{RepoURL: strings.Replace(repo.URL, "https://", "https://git:"+token+"@", 1), Chart: "web"},
		Destination: ApplicationDestination{Name: "prod"}}}
	app.Name = "leaky"
	_, _, renderErr := e.Render(context.Background(), app)
	if renderErr == nil {
		t.Fatal("a chart app behind an untrusted certificate rendered")
	}

	argoStore, err := repocreds.Load("repos.yaml", []byte(`apiVersion: v1
kind: Secret
metadata: {name: r, namespace: argocd, labels: {argocd.argoproj.io/secret-type: repo-creds}}
stringData: {url: "https://git.example.com/", password: `+password+`, bearerToken: `+token+`, sshPrivateKey: `+key+`}
`))
	if err != nil {
		t.Fatal(err)
	}

	values := map[string]any{
		"source.Credentials":      creds,
		"*source.Credentials":     &creds,
		"source.Repository":       source.Repository{URL: "https://git:" + password + "@git.example.com/x.git", Credentials: &creds},
		"gitops.ClusterConfig":    cluster,
		"[]gitops.ClusterConfig":  []ClusterConfig{cluster},
		"gitops.Options":          opts,
		"kubeconfig.Context":      kubeconfig.Context{Name: "east", Config: restCfg},
		"webhook.Secrets":         webhook.Secrets{webhook.GitHub: {hmac}},
		"webhook.Options":         webhook.Options{Secrets: webhook.Secrets{webhook.GitLab: {hmac}}},
		"*testenv.Cluster":        cluster0(),
		"chart source.Repository": source.Repository{URL: "oci://registry.example.com/charts", Chart: "web", Credentials: &creds},
		"*helmrepo.Source":        charts,
		"chart resolve error":     chartErr,
		"chart render error":      renderErr,
		"*repocreds.Store":        argoStore,
	}
	for name, v := range values {
		var out bytes.Buffer
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
			fmt.Fprintf(&out, verb+"\n", v)
		}
		if js, err := json.Marshal(v); err == nil {
			out.Write(js)
		}
		if y, err := yaml.Marshal(v); err == nil {
			out.Write(y)
		}
		log := funcr.New(func(prefix, args string) { out.WriteString(prefix + args) }, funcr.Options{})
		log.Info("value", "v", v)
		for _, s := range secrets {
			if strings.Contains(out.String(), s) {
				t.Errorf("%s reveals %s:\n%s", name, s, out.String())
			}
		}
	}
}

// cluster0 is the package's test cluster, whose admin token must not print.
func cluster0() any { return cluster }
