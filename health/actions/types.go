package actions

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Param is one parameter an action accepts, as discovery.lua declares it.
type Param struct {
	// Name is the key the action reads from actionParams.
	Name string `json:"name"`
	// Type is a hint for user interfaces ("string", "number", ...); Argo
	// CD passes every value as a string whatever the type.
	Type string `json:"type,omitempty"`
	// Default is the value a user interface proposes.
	Default string `json:"default,omitempty"`
}

// Action is one action an object offers, as discovery.lua returns it.
type Action struct {
	// Name is the action's key in the discovery table.
	Name string `json:"name"`
	// Disabled is true when the object's state makes the action
	// meaningless now (resume on a running CronJob).
	Disabled bool `json:"disabled,omitempty"`
	// IconClass is a CSS class name for user interfaces.
	IconClass string `json:"iconClass,omitempty"`
	// DisplayName is a label for user interfaces.
	DisplayName string `json:"displayName,omitempty"`
	// Params are the parameters the action accepts.
	Params []Param `json:"params,omitempty"`
}

// Operation is what to do with one impacted resource.
type Operation string

// The operations Argo CD defines.
const (
	// OperationPatch changes the object the action ran on.
	OperationPatch Operation = "patch"
	// OperationCreate creates a new object.
	OperationCreate Operation = "create"
)

// Impacted is one object an action changes or creates.
type Impacted struct {
	// Operation is patch or create.
	Operation Operation
	// Object is the object the script returned: for a patch the whole
	// changed object, for a create the new object.
	Object *unstructured.Unstructured
	// Patch is, for a patch, the JSON merge patch from the live object to
	// Object without its status (nil when nothing but the status
	// changed); it carries metadata.resourceVersion, so it fails rather
	// than overwrite a newer object. Empty for a create.
	Patch []byte
	// StatusPatch is, for a patch that changed .status, the JSON merge
	// patch of the status subresource (Argo Rollouts' promote-full sets
	// status.promoteFull); nil otherwise.
	StatusPatch []byte
}

// Result is what an action asks for, validated and ready to apply.
type Result struct {
	// Action is the action's name.
	Action string
	// Impacted lists the objects to patch or create, in the order the
	// script returned them (one patch for the older form). An action that
	// changed nothing yields none.
	Impacted []Impacted
}

// Sentinel errors wrapped by *Error.
var (
	// ErrNoActions: no discovery script covers the object's kind.
	ErrNoActions = errors.New("kind has no actions")
	// ErrUnknownAction: discovery does not offer the action, or no
	// action.lua defines it.
	ErrUnknownAction = errors.New("unknown action")
	// ErrInvalidParam: a parameter the action does not declare.
	ErrInvalidParam = errors.New("invalid action parameter")
	// ErrDisabled: discovery offers the action but marks it disabled.
	ErrDisabled = errors.New("action is disabled")
	// ErrInvalidResult: the script returned something that is neither an
	// object nor a list of impacted resources, an unknown operation, or
	// an incomplete object to create.
	ErrInvalidResult = errors.New("invalid action result")
	// ErrIdentityChanged: a patch names another object than the one the
	// action ran on (apiVersion group, kind, namespace or name differ).
	ErrIdentityChanged = errors.New("action changed the object's identity")
	// ErrForbiddenField: a patch changes a field the API server or the
	// engine owns (metadata.uid, resourceVersion, generation,
	// creationTimestamp, deletionTimestamp, managedFields, selfLink).
	ErrForbiddenField = errors.New("action changed a forbidden field")
	// ErrInvalidDefinition: a script library or argocd-cm value is
	// malformed (no discovery.lua, an action without a name or script).
	ErrInvalidDefinition = errors.New("invalid action definition")
)

// Error reports why an action could not be listed or run. Object is the
// object it ran on ("apps/Deployment ns/name"), Action the action's name
// (empty for discovery); Err wraps one of the sentinels above or a
// *health.LuaError (test with errors.Is / errors.As).
type Error struct {
	// Object names the object the action ran on.
	Object string
	// Action is the action's name, or empty for discovery.
	Action string
	// Err is the cause.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Action == "" {
		return fmt.Sprintf("%s: actions: %v", e.Object, e.Err)
	}
	return fmt.Sprintf("%s: action %s: %v", e.Object, e.Action, e.Err)
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }
