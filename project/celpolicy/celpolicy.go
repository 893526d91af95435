package celpolicy

import (
	"context"
	"fmt"

	"cel.dev/cel-go/cel"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/project"
	"github.com/kubegitops/gitops/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Rule is one rule of a Policy: for the objects of the kinds it
// selects, Expression must evaluate to true, or the object is refused with
// Message. The expression sees the object as `object` (as in a Kubernetes
// ValidatingAdmissionPolicy) and the application as `app` (its metadata
// name, project and destination), for example:
//
//	object.spec.template.spec.containers.all(c, has(c.resources.limits))
type Rule struct {
	// Name names the rule in errors.
	Name string
	// Kinds selects objects by group and kind ("apps/Deployment",
	// "Deployment.apps", "*" for all). Empty selects all.
	Kinds []string
	// Expression is a CEL expression of type bool.
	Expression string
	// Message explains a refusal.
	Message string
}

// Policy is a project.Policy made of CEL rules, compiled once. Evaluation
// is bounded by a cost limit and honours the context, so a rule cannot run
// away.
type Policy struct {
	name  string
	rules []compiledRule
}

type compiledRule struct {
	Rule
	kinds []schema.GroupKind
	prg   cel.Program
}

// CostLimit bounds the cost of one evaluation of one rule.
const CostLimit = 1_000_000

// New compiles the rules into a Policy named name (the project of its
// refusals); an expression that does not compile or is not boolean is an
// error naming the rule.
func New(name string, rules ...Rule) (*Policy, error) {
	env, err := cel.NewEnv(cel.Variable("object", cel.DynType), cel.Variable("app", cel.DynType))
	if err != nil {
		return nil, err
	}
	p := &Policy{name: name}
	for _, r := range rules {
		ast, iss := env.Compile(r.Expression)
		if iss.Err() != nil {
			return nil, fmt.Errorf("policy %s rule %s: %w", name, r.Name, iss.Err())
		}
		if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
			return nil, fmt.Errorf("policy %s rule %s: expression is %s, want bool", name, r.Name, ast.OutputType())
		}
		prg, err := env.Program(ast, cel.CostLimit(CostLimit), cel.InterruptCheckFrequency(100))
		if err != nil {
			return nil, fmt.Errorf("policy %s rule %s: %w", name, r.Name, err)
		}
		cr := compiledRule{Rule: r, prg: prg}
		for _, k := range r.Kinds {
			cr.kinds = append(cr.kinds, resource.ParseGroupKind(k))
		}
		p.rules = append(p.rules, cr)
	}
	return p, nil
}

func (r compiledRule) selects(gk schema.GroupKind) bool {
	if len(r.kinds) == 0 {
		return true
	}
	for _, k := range r.kinds {
		if (k.Kind == "*" || k.Kind == gk.Kind) && (k.Group == "*" || k.Group == gk.Group || k.Kind == "*") {
			return true
		}
	}
	return false
}

// Check implements project.Policy: the first rule that selects obj and does not
// hold refuses it. An evaluation error (a missing field the expression did
// not guard with has(), the cost limit) refuses too, saying so.
func (p *Policy) Check(ctx context.Context, app *v1alpha1.Application, obj *unstructured.Unstructured) error {
	key := resource.KeyOf(obj)
	appVars := map[string]any{
		"name": app.Name, "project": app.Spec.Project,
		"destination": map[string]any{"server": app.Spec.Destination.Server, "name": app.Spec.Destination.Name, "namespace": app.Spec.Destination.Namespace},
	}
	for _, r := range p.rules {
		if !r.selects(key.GroupKind()) {
			continue
		}
		out, _, err := r.prg.ContextEval(ctx, map[string]any{"object": obj.Object, "app": appVars})
		if err != nil {
			return &project.PolicyError{Project: p.name, Rule: r.Name, Subject: key.String(), Reason: "evaluation failed: " + err.Error()}
		}
		if ok, isBool := out.Value().(bool); !isBool || !ok {
			msg := r.Message
			if msg == "" {
				msg = "expression " + r.Expression + " is false"
			}
			return &project.PolicyError{Project: p.name, Rule: r.Name, Subject: key.String(), Reason: msg}
		}
	}
	return nil
}
