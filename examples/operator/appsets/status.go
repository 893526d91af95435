package appsets

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The condition types of a set's status, Argo CD's.
const (
	ConditionErrorOccurred       = "ErrorOccurred"
	ConditionParametersGenerated = "ParametersGenerated"
	ConditionResourcesUpToDate   = "ResourcesUpToDate"
	ConditionRolloutProgressing  = "RolloutProgressing"
)

// The reasons of the conditions, Argo CD's.
const (
	ReasonApplicationSetUpToDate        = "ApplicationSetUpToDate"
	ReasonParametersGenerated           = "ParametersGenerated"
	ReasonParamsGenerationError         = "ApplicationGenerationFromParamsError"
	ReasonApplicationValidationError    = "ApplicationValidationError"
	ReasonCreateApplicationError        = "CreateApplicationError"
	ReasonUpdateApplicationError        = "UpdateApplicationError"
	ReasonDeleteApplicationError        = "DeleteApplicationError"
	ReasonSyncApplicationError          = "SyncApplicationError"
	ReasonApplicationSetModified        = "ApplicationSetModified"
	ReasonApplicationSetRolloutComplete = "ApplicationSetRolloutComplete"
)

// maxMessage bounds a condition's message (many failing Applications).
const maxMessage = 8 << 10

const generatedMessage = "Successfully generated parameters for all Applications"

// writeStatus writes the set's status through the status subresource
// when it changed: conditions, resources and the rollout's state.
func (r *Reconciler) writeStatus(ctx context.Context, set *v1alpha1.ApplicationSet, out applied, roll rolloutResult, genErr error) error {
	now := metav1.NewTime(r.now().Truncate(time.Second))
	failures := append(slices.Clone(out.failures), roll.failures...)
	errs := []error{genErr}
	for _, f := range failures {
		errs = append(errs, f.err)
	}
	joined := errors.Join(errs...)
	cond := func(typ, status, reason, msg string) v1alpha1.ApplicationSetCondition {
		if len(msg) > maxMessage {
			msg = msg[:maxMessage] + "..."
		}
		return v1alpha1.ApplicationSetCondition{Type: typ, Status: status, Reason: reason, Message: msg}
	}
	var conds []v1alpha1.ApplicationSetCondition
	switch {
	case genErr != nil:
		conds = append(conds,
			cond(ConditionErrorOccurred, "True", ReasonParamsGenerationError, joined.Error()),
			cond(ConditionParametersGenerated, "False", ReasonParamsGenerationError, genErr.Error()),
			cond(ConditionResourcesUpToDate, "False", ReasonParamsGenerationError, joined.Error()))
	case len(failures) > 0:
		conds = append(conds,
			cond(ConditionErrorOccurred, "True", failures[0].reason, joined.Error()),
			cond(ConditionParametersGenerated, "True", ReasonParametersGenerated, generatedMessage),
			cond(ConditionResourcesUpToDate, "False", failures[0].reason, joined.Error()))
	default:
		conds = append(conds,
			cond(ConditionErrorOccurred, "False", ReasonApplicationSetUpToDate, generatedMessage),
			cond(ConditionParametersGenerated, "True", ReasonParametersGenerated, generatedMessage),
			cond(ConditionResourcesUpToDate, "True", ReasonApplicationSetUpToDate, "ApplicationSet up to date"))
	}
	if r.rollingSync(set) {
		if roll.step >= 0 {
			conds = append(conds, cond(ConditionRolloutProgressing, "True", ReasonApplicationSetModified,
				fmt.Sprintf("ApplicationSet is performing rollout of step %d", roll.step+1)))
		} else {
			conds = append(conds, cond(ConditionRolloutProgressing, "False", ReasonApplicationSetRolloutComplete, "ApplicationSet Rollout has completed"))
		}
	}
	for i := range conds {
		conds[i].LastTransitionTime = &now
		for _, old := range set.Status.Conditions {
			if old.Type == conds[i].Type && old.Status == conds[i].Status && old.LastTransitionTime != nil {
				conds[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	next := v1alpha1.ApplicationSetStatus{Conditions: conds, ApplicationStatus: roll.statuses, Health: set.Status.Health}
	names := make([]string, 0, len(out.apps))
	for n := range out.apps {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		a := out.apps[n]
		row := v1alpha1.ResourceStatus{Group: v1alpha1.Group, Version: v1alpha1.Version, Kind: v1alpha1.ApplicationKind,
			Namespace: a.Namespace, Name: a.Name, Status: a.Status.Sync.Status}
		if a.Status.Health.Status != "" {
			row.Health = &v1alpha1.HealthStatus{Status: a.Status.Health.Status, Message: a.Status.Health.Message}
		}
		next.Resources = append(next.Resources, row)
	}
	next.ResourcesCount = int64(len(next.Resources))
	if n := r.opts.Settings.MaxStatusResources; n > 0 && len(next.Resources) > n {
		next.Resources = next.Resources[:n] // the count stays the whole one, as in Argo CD
	}
	if resource.ObjectsEqual(&set.Status, &next) {
		return nil
	}
	orig := set.DeepCopy()
	set.Status = next
	if err := r.client.Status().Patch(ctx, set, client.MergeFrom(orig)); err != nil {
		return &Error{Set: keyOf(set), Err: fmt.Errorf("write status: %w", err)}
	}
	return nil
}
