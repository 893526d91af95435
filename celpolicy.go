package gitops

import "github.com/kubegitops/gitops/project/celpolicy"

// CEL policies live in package project/celpolicy, apart from the engine,
// so that a host building on package engine alone does not build CEL; the
// root names them as it always has.

// CELCostLimit bounds the cost of one evaluation of one CEL rule
// (celpolicy.CostLimit).
const CELCostLimit = celpolicy.CostLimit

type (
	// CELRule is one rule of a CELPolicy (celpolicy.Rule).
	CELRule = celpolicy.Rule
	// CELPolicy is a Policy made of CEL rules (celpolicy.Policy).
	CELPolicy = celpolicy.Policy
)

// NewCELPolicy compiles CEL rules into a Policy; it is celpolicy.New.
func NewCELPolicy(name string, rules ...CELRule) (*CELPolicy, error) {
	return celpolicy.New(name, rules...)
}
