package rbac

import (
	"fmt"
	"strconv"
	"strings"
)

// KeyDisableFineGrainedInheritance is the argocd-cm key
// (server.rbac.disableApplicationFineGrainedRBACInheritance) that says
// whether update and delete on an application also grant them on its
// resources. Argo CD 3 reads an absent or empty value as true: they do
// not.
const KeyDisableFineGrainedInheritance = "server.rbac.disableApplicationFineGrainedRBACInheritance"

// EnforcerOptions change how an Enforcer decides. The zero value (and
// DefaultEnforcerOptions) decides as Argo CD 3 does.
type EnforcerOptions struct {
	// DenyAcrossSubjects is stricter than Argo CD: a deny line matching
	// the subject's name or any of its groups refuses the request, even
	// when another of them is allowed. Argo CD (the default, false)
	// checks each on its own and allows the request when any is allowed.
	DenyAcrossSubjects bool
	// ResourceInheritance makes update and delete on an application also
	// grant them on its resources, as Argo CD 2 did (argocd-cm's
	// server.rbac.disableApplicationFineGrainedRBACInheritance: "false";
	// see InheritanceFromArgoCDCM and DecideResource). Default false, Argo
	// CD 3's: a resource needs "update/<group>/<kind>/<namespace>/<name>"
	// or "delete/...".
	ResourceInheritance bool
}

// DefaultEnforcerOptions returns the options of an Enforcer that decides
// as Argo CD 3 does: each subject on its own, no inheritance of update and
// delete by an application's resources.
func DefaultEnforcerOptions() EnforcerOptions { return EnforcerOptions{} }

// InheritanceFromArgoCDCM reads argocd-cm's
// server.rbac.disableApplicationFineGrainedRBACInheritance (the data of
// the ConfigMap; nil when there is none) as Argo CD 3 does and returns
// EnforcerOptions.ResourceInheritance: true only when the key says false.
// A value strconv.ParseBool does not read is an *Error naming the key.
func InheritanceFromArgoCDCM(data map[string]string) (bool, error) {
	v := strings.TrimSpace(data[KeyDisableFineGrainedInheritance])
	if v == "" {
		return false, nil
	}
	disable, err := strconv.ParseBool(v)
	if err != nil {
		return false, &Error{Source: "argocd-cm " + KeyDisableFineGrainedInheritance,
			Err: fmt.Errorf("%w: want true or false, got %q", ErrInvalidValue, v)}
	}
	return !disable, nil
}
