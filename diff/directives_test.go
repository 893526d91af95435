package diff

import (
	"errors"
	"reflect"
	"testing"
)

const deploymentWithDirectives = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      $setElementOrder/containers: [{name: sidecar}, {name: web}]
      containers:
      - {name: web, image: nginx}
      - {name: debug, image: busybox, $patch: delete}
      - name: sidecar
        image: envoy
        $patch: merge
      volumes:
      - {name: cache, emptyDir: {$patch: delete}}
`

func TestDirectivesResolved(t *testing.T) {
	r := NewDirectiveResolver()
	in := mustObject(t, deploymentWithDirectives)
	before := in.DeepCopy()
	out, err := r.Resolve(in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in.Object, before.Object) {
		t.Fatal("Resolve modified its input")
	}
	want := mustObject(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: sidecar, image: envoy}
      - {name: web, image: nginx}
      volumes:
      - {name: cache}
`)
	if !reflect.DeepEqual(out.Object, want.Object) {
		t.Fatalf("resolved\n%v\nwant\n%v", out.Object, want.Object)
	}
	plain := mustObject(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n")
	if got, err := r.Resolve(plain); err != nil || got != plain {
		t.Fatalf("an object without directives is not returned as is: %v", err)
	}
}

func TestDirectivesRefused(t *testing.T) {
	r := NewDirectiveResolver()
	for name, tc := range map[string]struct{ yaml, path, directive string }{
		"replace": {`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - {name: web, image: nginx, $patch: replace}
`, "/spec/template/spec/containers/0", "$patch: replace"},
		"retainKeys": {`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  strategy: {$retainKeys: [type], type: Recreate}
`, "/spec/strategy", "$retainKeys"},
		"deleteFromPrimitiveList": {`
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    $deleteFromPrimitiveList/args: [--debug]
    args: [--serve]
`, "/spec/containers/0", "$deleteFromPrimitiveList/args"},
		"custom resource": {`
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec:
  parts:
  - {name: a, $patch: delete}
`, "/spec/parts/0", "$patch: delete"},
		"object deletes itself": {`
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
$patch: delete
`, "/", "$patch: delete"},
	} {
		_, err := r.Resolve(mustObject(t, tc.yaml))
		var de *DirectiveError
		if !errors.As(err, &de) || de.Path != tc.path || de.Directive != tc.directive {
			t.Errorf("%s: %v, want a DirectiveError for %s at %s", name, err, tc.directive, tc.path)
		}
	}
	// Keys of user data are not directives, and a CRD's schema may hold
	// $ref-like keys that are none of strategic merge's.
	crd := mustObject(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  versions:
  - name: v1
    schema:
      openAPIV3Schema: {$schema: "http://json-schema.org/draft-04/schema#", type: object}
`)
	if _, err := r.Resolve(crd); err != nil {
		t.Errorf("a CRD with $schema refused: %v", err)
	}
}
