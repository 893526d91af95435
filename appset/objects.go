package appset

import (
	"context"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// StaticObjects serves ConfigMaps and Secrets from manifests (a test's,
// or the CLI's --objects files), by namespace/name.
type StaticObjects struct {
	// ConfigMaps are the ConfigMaps' data, by namespace/name.
	ConfigMaps map[string]map[string]string
	// Secrets are the Secrets, by namespace/name.
	Secrets map[string]*corev1.Secret
}

var _ Objects = StaticObjects{}

// ObjectsFromManifests keeps the ConfigMaps and Secrets of objs (data
// base64 as in a manifest, stringData plain); other kinds are skipped. A
// manifest without a namespace is in namespace.
func ObjectsFromManifests(objs []*unstructured.Unstructured, namespace string) (StaticObjects, error) {
	out := StaticObjects{ConfigMaps: map[string]map[string]string{}, Secrets: map[string]*corev1.Secret{}}
	for _, o := range objs {
		ns := o.GetNamespace()
		if ns == "" {
			ns = namespace
		}
		id := ns + "/" + o.GetName()
		switch {
		case o.GetAPIVersion() == "v1" && o.GetKind() == "ConfigMap":
			data, _, err := unstructured.NestedStringMap(o.Object, "data")
			if err != nil {
				return StaticObjects{}, fmt.Errorf("configmap %s: data: %w", id, err)
			}
			out.ConfigMaps[id] = data
		case o.GetAPIVersion() == "v1" && o.GetKind() == "Secret":
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: o.GetName(), Labels: o.GetLabels()}, Data: map[string][]byte{}}
			raw, _, err := unstructured.NestedStringMap(o.Object, "data")
			if err != nil {
				return StaticObjects{}, fmt.Errorf("secret %s: data: %w", id, err)
			}
			for k, v := range raw {
				b, err := base64.StdEncoding.DecodeString(v)
				if err != nil {
					return StaticObjects{}, fmt.Errorf("secret %s: data.%s: not base64", id, k)
				}
				s.Data[k] = b
			}
			str, _, err := unstructured.NestedStringMap(o.Object, "stringData")
			if err != nil {
				return StaticObjects{}, fmt.Errorf("secret %s: stringData: %w", id, err)
			}
			for k, v := range str {
				s.Data[k] = []byte(v)
			}
			out.Secrets[id] = s
		}
	}
	return out, nil
}

// ConfigMap implements Objects.
func (s StaticObjects) ConfigMap(_ context.Context, namespace, name string) (map[string]string, error) {
	cm, ok := s.ConfigMaps[namespace+"/"+name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
	}
	return cm, nil
}

// Secret implements Objects.
func (s StaticObjects) Secret(_ context.Context, namespace, name string) (*corev1.Secret, error) {
	sec, ok := s.Secrets[namespace+"/"+name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
	return sec, nil
}
