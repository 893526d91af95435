package gitops

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/source"
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
	creds := source.Credentials{Username: "git", Password: password, BearerToken: token, SSHPrivateKey: []byte(key), SSHPassphrase: hmac}
	cluster := ClusterConfig{Name: "east", Server: "https://east:6443", Config: restCfg}
	opts := DefaultOptions()
	opts.Clusters = []ClusterConfig{cluster}

	values := map[string]any{
		"source.Credentials":     creds,
		"*source.Credentials":    &creds,
		"source.Repository":      source.Repository{URL: "https://git:" + password + "@git.example.com/x.git", Credentials: &creds},
		"gitops.ClusterConfig":   cluster,
		"[]gitops.ClusterConfig": []ClusterConfig{cluster},
		"gitops.Options":         opts,
		"cache.NamedConfig":      cache.NamedConfig{Name: "east", Config: restCfg},
		"webhook.Secrets":        webhook.Secrets{webhook.GitHub: {hmac}},
		"webhook.Options":        webhook.Options{Secrets: webhook.Secrets{webhook.GitLab: {hmac}}},
		"*testenv.Cluster":       cluster0(),
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
