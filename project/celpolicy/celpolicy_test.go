package celpolicy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/project"
	"github.com/kubegitops/gitops/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(t *testing.T, yaml string) *unstructured.Unstructured {
	t.Helper()
	objs, err := resource.Decode("t.yaml", []byte(yaml), resource.DefaultDecodeOptions())
	if err != nil {
		t.Fatal(err)
	}
	return objs[0]
}

func TestPolicy(t *testing.T) {
	pol, err := New("limits", Rule{
		Name:       "deployments-set-limits",
		Kinds:      []string{"apps/Deployment"},
		Expression: "object.spec.template.spec.containers.all(c, has(c.resources) && has(c.resources.limits))",
		Message:    "every container must set resource limits",
	})
	if err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{}
	without := obj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: c, image: x}]}}}\n")
	with := obj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: c, image: x, resources: {limits: {cpu: 1}}}]}}}\n")
	cm := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	err = pol.Check(context.Background(), app, without)
	var pe *project.PolicyError
	if !errors.As(err, &pe) || pe.Project != "limits" || pe.Rule != "deployments-set-limits" || !errors.Is(err, project.ErrPolicy) ||
		!strings.Contains(err.Error(), "every container must set resource limits") {
		t.Errorf("deployment without limits: %v, want a *project.PolicyError naming the policy and the rule", err)
	}
	if err := pol.Check(context.Background(), app, with); err != nil {
		t.Errorf("deployment with limits: %v", err)
	}
	if err := pol.Check(context.Background(), app, cm); err != nil {
		t.Errorf("rule applied to another kind: %v", err)
	}
	if _, err := New("bad", Rule{Name: "typo", Expression: "object.spec.("}); err == nil || !strings.Contains(err.Error(), "typo") {
		t.Errorf("broken expression: %v", err)
	}
	if _, err := New("bad", Rule{Name: "not-bool", Expression: "1 + 1"}); err == nil {
		t.Error("non-boolean expression accepted")
	}
	// A runaway expression stops at the cost limit.
	bomb, err := New("bomb", Rule{Name: "loop", Expression: "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a+b+c+d+e+f > 0))))))"})
	if err != nil {
		t.Fatal(err)
	}
	if err := bomb.Check(context.Background(), app, cm); err == nil || !strings.Contains(err.Error(), "evaluation failed") {
		t.Errorf("runaway expression: %v", err)
	}
}
