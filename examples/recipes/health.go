package recipes

import (
	"fmt"

	"github.com/kubegitops/gitops/health"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// queueHealthLua judges example.com/Queue in Argo CD's Lua format: a script
// written for Argo CD's resource_customizations works unchanged.
const queueHealthLua = `
hs = {status = "Progressing", message = "waiting for the queue"}
if obj.status ~= nil and obj.status.ready then
  hs.status = "Healthy"
  hs.message = obj.status.depth .. " messages queued"
elseif obj.status ~= nil and obj.status.error ~= nil then
  hs.status = "Degraded"
  hs.message = obj.status.error
end
return hs`

// NewHealthChecker returns the built-in checker (with the shipped Lua
// scripts) plus a Lua script for example.com/Queue and a Go check for
// example.com/Database; set it as Options.Health.
func NewHealthChecker() (health.Checker, error) {
	opts := health.DefaultOptions()
	opts.Overrides = map[string]string{"example.com/Queue": queueHealthLua} // "group/Kind"
	opts.Checks = map[schema.GroupKind]health.CheckerFunc{
		{Group: "example.com", Kind: "Database"}: databaseHealth,
	}
	return health.NewChecker(opts) // compiles every script now
}

// databaseHealth judges example.com/Database from status.phase, and only
// once the controller has seen the current spec (observedGeneration).
func databaseHealth(obj *unstructured.Unstructured) (*health.Status, error) {
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if observed < obj.GetGeneration() {
		return &health.Status{Code: health.Progressing, Message: "waiting for the controller to observe the spec"}, nil
	}
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	switch phase {
	case "Ready":
		return &health.Status{Code: health.Healthy}, nil
	case "Provisioning", "Upgrading":
		return &health.Status{Code: health.Progressing, Message: phase}, nil
	case "Failed":
		msg, _, _ := unstructured.NestedString(obj.Object, "status", "message")
		return &health.Status{Code: health.Degraded, Message: msg}, nil
	}
	return &health.Status{Code: health.Unknown, Message: fmt.Sprintf("unknown phase %q", phase)}, nil
}
