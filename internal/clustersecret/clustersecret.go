// Package clustersecret reads Argo CD cluster Secrets (label
// argocd.argoproj.io/secret-type: cluster), as `argocd cluster add` writes
// them, into a destination: name, server, namespaces, clusterResources,
// project and the connection described by the config key. It is the one
// parser of these Secrets: the engine (gitops.ClusterFromSecret) and the
// ApplicationSet clusters generator (appset.ClustersFromSecrets) both use it.
package clustersecret

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// TypeLabel marks an Argo CD Secret by its kind; cluster Secrets carry the
// value TypeCluster.
const (
	TypeLabel   = "argocd.argoproj.io/secret-type"
	TypeCluster = "cluster"
)

// ErrUnsupported is wrapped by the error of a config field this engine does
// not implement (awsAuthConfig), or of a key Argo CD does not define.
var ErrUnsupported = errors.New("not supported")

// Error reports a malformed cluster Secret, naming it (namespace/name) and
// the key at fault; it never carries the key's value.
type Error struct {
	// Secret is the Secret's namespace/name.
	Secret string
	// Key is the data key at fault ("server", "config.tlsClientConfig.caData").
	Key string
	// Err is the cause.
	Err error
}

// Error names the Secret, the key and the cause.
func (e *Error) Error() string {
	return fmt.Sprintf("cluster secret %s: %s: %v", e.Secret, e.Key, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Cluster is what one cluster Secret says.
type Cluster struct {
	// Secret is the Secret's namespace/name.
	Secret string
	// Name is the name key, or the server URL when it is empty.
	Name string
	// Server is the server key: the URL Applications name.
	Server string
	// Namespaces are the namespaces the cluster may be managed in (the
	// comma-separated namespaces key); empty for the whole cluster.
	Namespaces []string
	// ClusterResources is the clusterResources key ("true"): whether
	// cluster-scoped resources are managed when Namespaces is not empty.
	ClusterResources bool
	// Project is the project key: the project the cluster is scoped to.
	Project string
	// Labels and Annotations are the Secret's.
	Labels, Annotations map[string]string
	// Config reaches the cluster as the config key describes. It is nil
	// when InCluster is true.
	Config *rest.Config
	// InCluster is true for a Secret of v1alpha1.KubernetesInternalAPIServerAddr whose config has
	// no credentials: Argo CD then uses its own in-cluster identity.
	InCluster bool
}

// IsClusterSecret reports whether labels mark an Argo CD cluster Secret.
func IsClusterSecret(labels map[string]string) bool {
	return labels[TypeLabel] == TypeCluster
}

// FromSecret reads a typed Secret.
func FromSecret(s *corev1.Secret) (Cluster, error) {
	data := make(map[string][]byte, len(s.Data)+len(s.StringData))
	for k, v := range s.Data {
		data[k] = v
	}
	for k, v := range s.StringData {
		data[k] = []byte(v)
	}
	return parse(s.Namespace+"/"+s.Name, s.Labels, s.Annotations, data)
}

// FromUnstructured reads a Secret decoded from YAML or JSON: data values
// are base64, stringData values plain text and win over data, as the API
// server merges them.
func FromUnstructured(o *unstructured.Unstructured) (Cluster, error) {
	id := o.GetNamespace() + "/" + o.GetName()
	data := map[string][]byte{}
	raw, _, _ := unstructured.NestedStringMap(o.Object, "data")
	for k, v := range raw {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return Cluster{}, &Error{Secret: id, Key: "data." + k, Err: errors.New("not base64")}
		}
		data[k] = b
	}
	str, _, _ := unstructured.NestedStringMap(o.Object, "stringData")
	for k, v := range str {
		data[k] = []byte(v)
	}
	return parse(id, o.GetLabels(), o.GetAnnotations(), data)
}

func parse(id string, labels, annotations map[string]string, data map[string][]byte) (Cluster, error) {
	c := Cluster{
		Secret: id, Name: string(data["name"]), Server: strings.TrimSpace(string(data["server"])),
		Project: string(data["project"]), Labels: labels, Annotations: annotations,
	}
	if c.Server == "" {
		return Cluster{}, &Error{Secret: id, Key: "server", Err: errors.New("missing")}
	}
	if _, err := url.Parse(c.Server); err != nil {
		return Cluster{}, &Error{Secret: id, Key: "server", Err: errors.New("not a URL")}
	}
	if c.Name == "" {
		c.Name = c.Server
	}
	for _, ns := range strings.Split(string(data["namespaces"]), ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			c.Namespaces = append(c.Namespaces, ns)
		}
	}
	switch v := strings.TrimSpace(string(data["clusterResources"])); v {
	case "", "false":
	case "true":
		c.ClusterResources = true
	default:
		return Cluster{}, &Error{Secret: id, Key: "clusterResources", Err: fmt.Errorf("%q is neither \"true\" nor \"false\"", v)}
	}
	cfg, err := parseConfig(data["config"])
	if err != nil {
		var ke *keyError
		key := "config"
		if errors.As(err, &ke) {
			key, err = "config."+ke.key, ke.err
		}
		return Cluster{}, &Error{Secret: id, Key: key, Err: err}
	}
	if c.Server == v1alpha1.KubernetesInternalAPIServerAddr && !cfg.hasCredentials() {
		c.InCluster = true
		return c, nil
	}
	if c.Config, err = cfg.restConfig(c.Server); err != nil {
		var ke *keyError
		if errors.As(err, &ke) {
			return Cluster{}, &Error{Secret: id, Key: "config." + ke.key, Err: ke.err}
		}
		return Cluster{}, &Error{Secret: id, Key: "config", Err: err}
	}
	return c, nil
}

// keyError names the field of config at fault.
type keyError struct {
	key string
	err error
}

// Error implements error.
func (e *keyError) Error() string { return e.key + ": " + e.err.Error() }

// execConfig converts Argo CD's execProviderConfig to client-go's, never
// interactive, as Argo CD does.
func execConfig(e *execProviderConfig) *clientcmdapi.ExecConfig {
	out := &clientcmdapi.ExecConfig{
		Command: e.Command, Args: e.Args, APIVersion: e.APIVersion, InstallHint: e.InstallHint,
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}
	names := make([]string, 0, len(e.Env))
	for k := range e.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out.Env = append(out.Env, clientcmdapi.ExecEnvVar{Name: k, Value: e.Env[k]})
	}
	return out
}
