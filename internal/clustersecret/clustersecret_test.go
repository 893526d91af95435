package clustersecret

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// selfSigned returns a PEM certificate and key.
func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func fromYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	o := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &o.Object); err != nil {
		t.Fatal(err)
	}
	return o
}

// The cluster Secret example of Argo CD's declarative setup (bearer token
// and CA), with a real certificate.
func TestArgoDocumentedBearerTokenExample(t *testing.T) {
	ca, _ := selfSigned(t)
	o := fromYAML(t, `apiVersion: v1
kind: Secret
metadata:
  name: mycluster-secret
  namespace: argocd
  labels:
    argocd.argoproj.io/secret-type: cluster
type: Opaque
stringData:
  name: mycluster.example.com
  server: https://mycluster.example.com
  config: |
    {
      "bearerToken": "<authentication token>",
      "tlsClientConfig": {
        "insecure": false,
        "caData": "`+base64.StdEncoding.EncodeToString(ca)+`"
      }
    }
`)
	if !IsClusterSecret(o.GetLabels()) {
		t.Fatal("not recognised as a cluster secret")
	}
	c, err := FromUnstructured(o)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "mycluster.example.com" || c.Server != "https://mycluster.example.com" || c.Secret != "argocd/mycluster-secret" {
		t.Errorf("cluster %+v", c)
	}
	if c.Config == nil || c.Config.Host != c.Server || c.Config.BearerToken != "<authentication token>" ||
		string(c.Config.CAData) != string(ca) || c.Config.Insecure {
		t.Errorf("config %+v", c.Config)
	}
	if c.InCluster || len(c.Namespaces) != 0 || c.ClusterResources {
		t.Errorf("cluster %+v", c)
	}
}

// Namespaces, clusterResources, project, basic auth, client certificates,
// serverName, exec, proxy and compression, from data (base64) as the API
// server returns it.
func TestEveryDocumentedField(t *testing.T) {
	cert, key := selfSigned(t)
	b64 := base64.StdEncoding.EncodeToString
	cfg := `{"username":"u","password":"p","disableCompression":true,"proxyUrl":"http://proxy:8888",
	"tlsClientConfig":{"insecure":true,"serverName":"api.internal","certData":"` + b64(cert) + `","keyData":"` + b64(key) + `"},
	"execProviderConfig":{"command":"argocd-k8s-auth","args":["gcp"],"env":{"B":"2","A":"1"},"apiVersion":"client.authentication.k8s.io/v1beta1","installHint":"install it"}}`
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "east"}, Data: map[string][]byte{
		"name": []byte("east"), "server": []byte("https://east:6443"), "namespaces": []byte("a, b,,c"),
		"clusterResources": []byte("true"), "project": []byte("team"), "config": []byte(cfg),
	}}
	c, err := FromSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Namespaces, "|") != "a|b|c" || !c.ClusterResources || c.Project != "team" {
		t.Errorf("cluster %+v", c)
	}
	r := c.Config
	if r.Username != "u" || r.Password != "p" || !r.DisableCompression || r.Proxy == nil || !r.Insecure ||
		r.ServerName != "api.internal" || string(r.CertData) != string(cert) || string(r.KeyData) != string(key) {
		t.Errorf("config %+v", r)
	}
	e := r.ExecProvider
	if e == nil || e.Command != "argocd-k8s-auth" || e.Args[0] != "gcp" || e.APIVersion != "client.authentication.k8s.io/v1beta1" ||
		e.InstallHint != "install it" || len(e.Env) != 2 || e.Env[0].Name != "A" || e.Env[0].Value != "1" || e.InteractiveMode != "Never" {
		t.Errorf("exec %+v", e)
	}
}

// A Secret of the in-cluster address without credentials is Argo CD's own
// cluster (as `argocd cluster add` of in-cluster or a renaming Secret
// writes it); with a token it is a cluster like any other.
func TestInClusterSecret(t *testing.T) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "in"}, Data: map[string][]byte{
		"name": []byte("local"), "server": []byte(v1alpha1.KubernetesInternalAPIServerAddr), "config": []byte(`{"tlsClientConfig":{"insecure":false}}`)}}
	c, err := FromSecret(s)
	if err != nil || !c.InCluster || c.Config != nil || c.Name != "local" {
		t.Errorf("in-cluster secret: %+v %v", c, err)
	}
	s.Data["config"] = []byte(`{"bearerToken":"t"}`)
	if c, err = FromSecret(s); err != nil || c.InCluster || c.Config.BearerToken != "t" {
		t.Errorf("in-cluster with a token: %+v %v", c, err)
	}
}

// Each malformed Secret gives an *Error naming the Secret and the key,
// without the secret value.
func TestMalformedSecrets(t *testing.T) {
	for _, tc := range []struct {
		name, key string
		data      map[string]string
		unsup     bool
	}{
		{"no server", "server", map[string]string{"name": "x"}, false},
		{"bad clusterResources", "clusterResources", map[string]string{"server": "https://x", "clusterResources": "yes"}, false},
		{"config not json", "config", map[string]string{"server": "https://x", "config": "{bearerToken: s3cr3t"}, false},
		{"aws", "config.awsAuthConfig", map[string]string{"server": "https://x", "config": `{"awsAuthConfig":{"clusterName":"c","roleARN":"arn"}}`}, true},
		{"gcp provider", "config.gcp", map[string]string{"server": "https://x", "config": `{"gcp":{"token":"s3cr3t"}}`}, true},
		{"unknown tls field", "config.tlsClientConfig.caFile", map[string]string{"server": "https://x", "config": `{"tlsClientConfig":{"caFile":"/x"}}`}, true},
		{"token not a string", "config.bearerToken", map[string]string{"server": "https://x", "config": `{"bearerToken":5}`}, false},
		{"ca not base64", "config.tlsClientConfig.caData", map[string]string{"server": "https://x", "config": `{"tlsClientConfig":{"caData":"s3cr3t!!"}}`}, false},
		{"ca not pem", "config.tlsClientConfig.caData", map[string]string{"server": "https://x", "config": `{"tlsClientConfig":{"caData":"czNjcjN0"}}`}, false},
		{"exec without command", "config.execProviderConfig.command", map[string]string{"server": "https://x", "config": `{"execProviderConfig":{"apiVersion":"v1"}}`}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "bad"}, StringData: tc.data}
			_, err := FromSecret(s)
			var e *Error
			if !errors.As(err, &e) || e.Secret != "argocd/bad" || e.Key != tc.key {
				t.Fatalf("error %#v (%v), want key %s", e, err, tc.key)
			}
			if errors.Is(err, ErrUnsupported) != tc.unsup {
				t.Errorf("errors.Is(ErrUnsupported) = %v: %v", !tc.unsup, err)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error leaks a secret value: %v", err)
			}
		})
	}
	o := fromYAML(t, "kind: Secret\nmetadata: {name: b64, namespace: argocd}\ndata: {server: '!!'}\n")
	var e *Error
	if _, err := FromUnstructured(o); !errors.As(err, &e) || e.Key != "data.server" {
		t.Errorf("bad base64: %v", err)
	}
}
