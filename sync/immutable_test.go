package sync

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// The classifier reads the API server's structured causes and the kind's
// known immutable fields, not one message suffix.
func TestImmutableFieldsClassifier(t *testing.T) {
	svc := schema.GroupKind{Kind: "Service"}
	deploy := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	sts := schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	pvc := schema.GroupKind{Kind: "PersistentVolumeClaim"}
	invalid := func(gk schema.GroupKind, errs ...*field.Error) error {
		return apierrors.NewInvalid(gk, "x", field.ErrorList(errs))
	}
	svcDesired := obj(t, `{apiVersion: v1, kind: Service, metadata: {name: x}, spec: {clusterIP: 10.96.0.9, ports: [{port: 80}]}}`)
	svcLive := obj(t, `{apiVersion: v1, kind: Service, metadata: {name: x}, spec: {clusterIP: 10.96.0.7, clusterIPs: [10.96.0.7], ports: [{port: 80, protocol: TCP}]}}`)
	deployLive := obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: x}, spec: {selector: {matchLabels: {app: a}}, replicas: 1}}`)
	deploySame := obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: x}, spec: {selector: {matchLabels: {app: a}}}}`)
	deployNew := obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: x}, spec: {selector: {matchLabels: {app: b}}}}`)
	stsLive := obj(t, `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: x}, spec: {serviceName: a, podManagementPolicy: OrderedReady, volumeClaimTemplates: [{metadata: {name: d}, spec: {accessModes: [ReadWriteOnce], volumeMode: Filesystem}}]}}`)
	stsNew := obj(t, `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: x}, spec: {serviceName: b, volumeClaimTemplates: [{metadata: {name: d}, spec: {accessModes: [ReadWriteOnce]}}]}}`)
	stsSame := obj(t, `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: x}, spec: {serviceName: a, volumeClaimTemplates: [{metadata: {name: d}, spec: {accessModes: [ReadWriteOnce]}}]}}`)
	pvcLive := obj(t, `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: x}, spec: {storageClassName: fast, accessModes: [ReadWriteOnce], volumeMode: Filesystem, resources: {requests: {storage: 1Gi}}}}`)
	pvcNew := obj(t, `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: x}, spec: {storageClassName: slow, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}`)
	stsForbidden := field.Forbidden(field.NewPath("spec"), "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")
	noCauses := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid,
		Message: `Deployment.apps "x" is invalid: field is immutable`}}

	cases := []struct {
		name          string
		err           error
		gk            schema.GroupKind
		desired, live *unstructured.Unstructured
		want          []string
		ok            bool
	}{
		{"service clusterIPs", invalid(svc,
			field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), []string{"10.96.0.9"}, "may not change once set"),
			field.Invalid(field.NewPath("spec", "clusterIP"), "10.96.0.9", "field is immutable")),
			svc, svcDesired, svcLive, []string{"spec.clusterIP", "spec.clusterIPs[0]"}, true},
		{"service without the objects", invalid(svc,
			field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), []string{"10.96.0.9"}, "may not change once set")),
			svc, nil, nil, []string{"spec.clusterIPs[0]"}, true},
		{"job template", invalid(schema.GroupKind{Group: "batch", Kind: "Job"},
			field.Invalid(field.NewPath("spec", "template"), "...", apivalidation.FieldImmutableErrorMsg)),
			schema.GroupKind{Group: "batch", Kind: "Job"}, nil, nil, []string{"spec.template"}, true},
		{"deployment selector", invalid(deploy,
			field.Invalid(field.NewPath("spec", "selector"), "...", apivalidation.FieldImmutableErrorMsg)),
			deploy, deployNew, deployLive, []string{"spec.selector"}, true},
		{"deployment selector, other wording", invalid(deploy,
			field.Invalid(field.NewPath("spec", "selector"), "...", "selectors are fixed")),
			deploy, deployNew, deployLive, []string{"spec.selector"}, true},
		{"deployment selector not matching labels is not immutability", invalid(deploy,
			field.Invalid(field.NewPath("spec", "template", "metadata", "labels"), "...", "`selector` does not match template `labels`")),
			deploy, deploySame, deployLive, nil, false},
		{"statefulset forbidden spec names the changed fields", invalid(sts, stsForbidden),
			sts, stsNew, stsLive, []string{"spec.serviceName"}, true},
		{"statefulset forbidden spec, no known field changed", invalid(sts, stsForbidden),
			sts, stsSame, stsLive, nil, false},
		{"pvc spec", invalid(pvc,
			field.Forbidden(field.NewPath("spec"), "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims")),
			pvc, pvcNew, pvcLive, []string{"spec.storageClassName"}, true},
		{"no causes", noCauses, deploy, deployNew, deployLive, []string{"spec.selector"}, true},
		{"wrapped", fmt.Errorf("apply: %w", invalid(svc,
			field.Invalid(field.NewPath("spec", "clusterIP"), "10.96.0.9", "field is immutable"))),
			svc, nil, nil, []string{"spec.clusterIP"}, true},
		{"an admission denial is not immutability", apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "x", errors.New("field is immutable by policy")),
			svc, svcDesired, svcLive, nil, false},
		{"a required field is not immutability", invalid(svc, field.Required(field.NewPath("spec", "ports"), "")),
			svc, svcDesired, svcLive, nil, false},
		{"nil", nil, svc, nil, nil, nil, false},
	}
	for _, c := range cases {
		got, ok := immutableFields(c.err, c.gk, c.desired, c.live)
		if ok != c.ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
	msg := (&ImmutableFieldError{Fields: []string{"spec.clusterIP"}}).Error()
	for _, want := range []string{"spec.clusterIP", "Force=true", "Replace=true", "RecreateOnImmutable"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %s", msg, want)
		}
	}
}
