// Package celpolicy is a project.Policy written in CEL: rules that every
// object an application applies must satisfy, checked with the project's
// own rules before anything is written (project.Admission), for example
//
//	celpolicy.New("resources", celpolicy.Rule{Name: "limits", Kinds: []string{"apps/Deployment"},
//		Expression: "object.spec.template.spec.containers.all(c, has(c.resources.limits))"})
//
// A rule sees the object as `object` (as a Kubernetes
// ValidatingAdmissionPolicy does) and the application as `app` (its name,
// project and destination). Each rule is compiled once; each evaluation
// is bounded by CostLimit and honours the context. A refusal is a
// *project.PolicyError naming the policy, the rule and the object.
//
// It lives apart from package project so that the engine, which calls
// project.Policy values, does not build CEL (cel-go and its parser): the
// root package (gitops.NewCELPolicy) and hosts that want CEL rules import
// it.
package celpolicy
