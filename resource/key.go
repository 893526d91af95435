package resource

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Key identifies one Kubernetes object independently of its API version:
// two manifests that differ only in apiVersion (apps/v1 against
// apps/v1beta1) name the same object. Namespace is empty for cluster-scoped
// objects and for namespaced objects whose namespace is yet to be defaulted.
type Key struct {
	// Group is the API group; empty for the core group.
	Group string
	// Kind is the object's kind.
	Kind string
	// Namespace is empty for a cluster-scoped object.
	Namespace string
	// Name is the object's name.
	Name string
}

// KeyOf returns the key of obj. It reads apiVersion, kind, namespace and name
// and never fails; an object without a kind or name gives a key with those
// fields empty, which Validate reports.
func KeyOf(obj *unstructured.Unstructured) Key {
	gvk := obj.GroupVersionKind()
	return Key{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// NewKey returns the key of the object of kind gk in namespace ns named name.
func NewKey(gk schema.GroupKind, ns, name string) Key {
	return Key{Group: gk.Group, Kind: gk.Kind, Namespace: ns, Name: name}
}

// GroupKind returns the group and kind of the key.
func (k Key) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: k.Group, Kind: k.Kind}
}

// String formats the key as "[group/]Kind [namespace/]name", for example
// "apps/Deployment web/frontend", "ConfigMap web/settings" or "Namespace web".
// The form is meant for people (errors, logs, tables) and ParseKey reads it
// back: a kind, group, namespace or name never holds a space or a slash.
func (k Key) String() string {
	var b strings.Builder
	b.Grow(len(k.Group) + len(k.Kind) + len(k.Namespace) + len(k.Name) + 3)
	if k.Group != "" {
		b.WriteString(k.Group)
		b.WriteByte('/')
	}
	b.WriteString(k.Kind)
	b.WriteByte(' ')
	if k.Namespace != "" {
		b.WriteString(k.Namespace)
		b.WriteByte('/')
	}
	b.WriteString(k.Name)
	return b.String()
}

// ParseKey reads a key in the form written by String. Kind and name are
// required; group and namespace are optional.
func ParseKey(s string) (Key, error) {
	gk, nn, ok := strings.Cut(s, " ")
	if !ok || strings.Contains(nn, " ") {
		return Key{}, fmt.Errorf("resource: key %q: want \"[group/]Kind [namespace/]name\"", s)
	}
	var k Key
	if g, kind, ok := strings.Cut(gk, "/"); ok {
		k.Group, k.Kind = g, kind
	} else {
		k.Kind = gk
	}
	if ns, name, ok := strings.Cut(nn, "/"); ok {
		k.Namespace, k.Name = ns, name
	} else {
		k.Name = nn
	}
	if err := k.Validate(); err != nil {
		return Key{}, fmt.Errorf("resource: key %q: %w", s, err)
	}
	return k, nil
}

// Validate reports whether the key can name an object: kind and name must be
// set and no part may hold a slash or white space.
func (k Key) Validate() error {
	if k.Kind == "" {
		return fmt.Errorf("kind is empty")
	}
	if k.Name == "" {
		return fmt.Errorf("name is empty")
	}
	for _, part := range [...]string{k.Group, k.Kind, k.Namespace, k.Name} {
		if strings.ContainsAny(part, "/ \t\r\n") {
			return fmt.Errorf("%q holds a slash or white space", part)
		}
	}
	return nil
}

// IsZero reports whether the key is the zero Key.
func (k Key) IsZero() bool { return k == Key{} }

// GVKOf returns the group, version and kind of obj.
func GVKOf(obj *unstructured.Unstructured) schema.GroupVersionKind {
	return obj.GroupVersionKind()
}

// GroupKindOf returns the group and kind of obj.
func GroupKindOf(obj *unstructured.Unstructured) schema.GroupKind {
	return obj.GroupVersionKind().GroupKind()
}

// ParseGroupKind reads "Kind" or "group/Kind" (the form Argo CD uses in
// resource customisations) or "Kind.group" (the form kubectl uses).
func ParseGroupKind(s string) schema.GroupKind {
	if g, k, ok := strings.Cut(s, "/"); ok {
		return schema.GroupKind{Group: g, Kind: k}
	}
	return schema.ParseGroupKind(s)
}
