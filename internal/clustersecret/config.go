package clustersecret

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"

	"k8s.io/client-go/rest"
)

// config is the config key of a cluster Secret, Argo CD's ClusterConfig
// (docs/operator-manual/declarative-setup.md, "Clusters").
type config struct {
	Username           string              `json:"username"`
	Password           string              `json:"password"`
	BearerToken        string              `json:"bearerToken"`
	TLSClientConfig    tlsClientConfig     `json:"tlsClientConfig"`
	AWSAuthConfig      json.RawMessage     `json:"awsAuthConfig"`
	ExecProviderConfig *execProviderConfig `json:"execProviderConfig"`
	DisableCompression bool                `json:"disableCompression"`
	ProxyURL           string              `json:"proxyUrl"`
}

// tlsClientConfig holds base64 PEM data, as Argo CD's []byte fields
// marshal.
type tlsClientConfig struct {
	Insecure   bool   `json:"insecure"`
	ServerName string `json:"serverName"`
	CAData     string `json:"caData"`
	CertData   string `json:"certData"`
	KeyData    string `json:"keyData"`
}

type execProviderConfig struct {
	Command     string            `json:"command"`
	Args        []string          `json:"args"`
	Env         map[string]string `json:"env"`
	APIVersion  string            `json:"apiVersion"`
	InstallHint string            `json:"installHint"`
}

// known are the keys of each object of config Argo CD defines.
var known = map[string][]string{
	"":                   {"username", "password", "bearerToken", "tlsClientConfig", "awsAuthConfig", "execProviderConfig", "disableCompression", "proxyUrl"},
	"tlsClientConfig":    {"insecure", "serverName", "caData", "certData", "keyData"},
	"execProviderConfig": {"command", "args", "env", "apiVersion", "installHint"},
}

// parseConfig decodes the config key. Keys Argo CD does not define are
// refused by name (Argo CD would ignore them, leaving a cluster that
// silently authenticates otherwise than its author meant); so is
// awsAuthConfig, which this engine does not implement.
func parseConfig(b []byte) (*config, error) {
	c := &config{}
	if len(b) == 0 {
		return c, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, errors.New("not a JSON object")
	}
	if err := checkKeys("", top); err != nil {
		return nil, err
	}
	for _, sub := range []string{"tlsClientConfig", "execProviderConfig"} {
		raw, ok := top[sub]
		if !ok || string(raw) == "null" {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, &keyError{key: sub, err: errors.New("not a JSON object")}
		}
		if err := checkKeys(sub, m); err != nil {
			return nil, err
		}
	}
	if err := json.Unmarshal(b, c); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, &keyError{key: te.Field, err: fmt.Errorf("a %s where a %s is expected", te.Value, te.Type)}
		}
		return nil, errors.New("not valid JSON")
	}
	if len(c.AWSAuthConfig) > 0 && string(c.AWSAuthConfig) != "null" {
		return nil, &keyError{key: "awsAuthConfig", err: fmt.Errorf("%w: AWS IAM authentication is not implemented; use execProviderConfig with argocd-k8s-auth or aws eks get-token", ErrUnsupported)}
	}
	return c, nil
}

func checkKeys(path string, m map[string]json.RawMessage) error {
	var unknown []string
	for k := range m {
		ok := false
		for _, want := range known[path] {
			ok = ok || k == want
		}
		if !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	key := unknown[0]
	if path != "" {
		key = path + "." + key
	}
	return &keyError{key: key, err: fmt.Errorf("%w: Argo CD's cluster config defines no such field (authentication other than basic, bearer token, client certificate and execProviderConfig is not implemented)", ErrUnsupported)}
}

// hasCredentials reports whether the config names an identity; a Secret
// of the in-cluster server without one means Argo CD's own.
func (c *config) hasCredentials() bool {
	return c.Username != "" || c.Password != "" || c.BearerToken != "" || c.ExecProviderConfig != nil || c.TLSClientConfig.CertData != ""
}

// restConfig is the client configuration of server as c describes it.
func (c *config) restConfig(server string) (*rest.Config, error) {
	out := &rest.Config{
		Host: server, Username: c.Username, Password: c.Password, BearerToken: c.BearerToken,
		DisableCompression: c.DisableCompression,
	}
	t := c.TLSClientConfig
	out.TLSClientConfig.Insecure, out.TLSClientConfig.ServerName = t.Insecure, t.ServerName
	var err error
	if out.TLSClientConfig.CAData, err = pemData("tlsClientConfig.caData", t.CAData); err != nil {
		return nil, err
	}
	if out.TLSClientConfig.CertData, err = pemData("tlsClientConfig.certData", t.CertData); err != nil {
		return nil, err
	}
	if out.TLSClientConfig.KeyData, err = pemData("tlsClientConfig.keyData", t.KeyData); err != nil {
		return nil, err
	}
	if ca := out.TLSClientConfig.CAData; len(ca) > 0 && !x509.NewCertPool().AppendCertsFromPEM(ca) {
		return nil, &keyError{key: "tlsClientConfig.caData", err: errors.New("holds no PEM certificate")}
	}
	if cert, key := out.TLSClientConfig.CertData, out.TLSClientConfig.KeyData; len(cert) > 0 || len(key) > 0 {
		if _, err := tls.X509KeyPair(cert, key); err != nil {
			return nil, &keyError{key: "tlsClientConfig.certData", err: errors.New("certData and keyData are not a matching PEM certificate and key")}
		}
	}
	if e := c.ExecProviderConfig; e != nil {
		if e.Command == "" {
			return nil, &keyError{key: "execProviderConfig.command", err: errors.New("missing")}
		}
		if e.APIVersion == "" {
			return nil, &keyError{key: "execProviderConfig.apiVersion", err: errors.New("missing")}
		}
		out.ExecProvider = execConfig(e)
	}
	if c.ProxyURL != "" {
		u, err := url.Parse(c.ProxyURL)
		if err != nil || u.Host == "" {
			return nil, &keyError{key: "proxyUrl", err: errors.New("not an absolute URL")}
		}
		out.Proxy = http.ProxyURL(u)
	}
	return out, nil
}

// pemData decodes a base64 field of tlsClientConfig.
func pemData(key, s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, &keyError{key: key, err: errors.New("not base64")}
	}
	return b, nil
}
