package v1alpha1

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate's *ValidationError names the app and holds apimachinery's
// field.ErrorList: typed errors (Required, Invalid, Forbidden) at field
// paths, found by errors.As; an Argo CD field the engine refuses keeps
// errors.Is(err, ErrUnsupported).
func TestValidateIsFieldErrorList(t *testing.T) {
	a := &Application{Spec: ApplicationSpec{Source: &ApplicationSource{Path: "/etc", Helm: &ApplicationSourceHelm{Version: "v2", PassCredentials: true}},
		Destination: ApplicationDestination{Server: KubernetesInternalAPIServerAddr}}}
	a.Namespace, a.Name = "argocd", "web"
	err := a.Validate()
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Kind != ApplicationKind || ve.Namespace != "argocd" || ve.Name != "web" {
		t.Fatalf("Validate = %v, want a *ValidationError naming argocd/web", err)
	}
	if !strings.HasPrefix(err.Error(), `Application "argocd/web" is invalid: `) {
		t.Errorf("message %q does not name the app", err)
	}
	var list field.ErrorList = ve.Fields
	types := map[string]field.ErrorType{}
	for _, fe := range list {
		types[fe.Field] = fe.Type
	}
	want := map[string]field.ErrorType{
		"spec.source.repoURL":              field.ErrorTypeRequired,
		"spec.source.path":                 field.ErrorTypeInvalid,
		"spec.source.helm.version":         field.ErrorTypeInvalid,
		"spec.source.helm.passCredentials": field.ErrorTypeForbidden,
	}
	for path, typ := range want {
		if types[path] != typ {
			t.Errorf("%s: type %q, want %q (all: %v)", path, types[path], typ, list)
		}
	}
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "spec.source.repoURL" {
		t.Errorf("errors.As(*field.Error) = %v", fe)
	}
	if !errors.Is(err, ErrUnsupported) {
		t.Error("helm.passCredentials is not ErrUnsupported")
	}
	if !strings.Contains(err.Error(), "helm version 'v2' is not supported") {
		t.Errorf("message %q lacks Argo CD's helm version message", err)
	}
	a.Spec.Source.Helm = &ApplicationSourceHelm{Version: "v4"}
	if err := a.Validate(); errors.Is(err, ErrUnsupported) || strings.Contains(err.Error(), "helm.version") {
		t.Errorf("ErrUnsupported without an unsupported field: %v", err)
	}
	if p := pathOf("spec.sources[1].kustomize.patches[0].options.x").String(); p != "spec.sources[1].kustomize.patches[0].options.x" {
		t.Errorf("pathOf round trip: %s", p)
	}
}
