package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// GenericHealth judges an object of any kind from the conventions that
// most controllers follow, in the manner of cli-utils' kstatus. The rules,
// in order:
//
//  1. metadata.deletionTimestamp set: Progressing "Pending deletion";
//  2. status.observedGeneration set and lower than metadata.generation:
//     Progressing (the controller has not seen the latest spec);
//  3. a Stalled condition that is True: Degraded with its message;
//  4. a Reconciling condition that is True: Progressing;
//  5. a Ready condition: True is Healthy; False or Unknown is Progressing
//     (as kstatus: many controllers report Ready=False while starting, and
//     a controller that gave up says so with Stalled);
//  6. an Available condition, read like Ready;
//  7. otherwise nil: no opinion. An object with no status conventions is
//     neither healthy nor unhealthy, and the caller decides.
func GenericHealth(u *unstructured.Unstructured) *Status {
	if u.GetDeletionTimestamp() != nil {
		return &Status{Code: Progressing, Message: "Pending deletion"}
	}
	obj := u.Object
	if generationBehind(obj) {
		return &Status{Code: Progressing, Message: "Waiting for the controller to observe the latest generation"}
	}
	conds := conditions(obj)
	if c, ok := findCondition(conds, "Stalled"); ok && c.Status == "True" {
		return &Status{Code: Degraded, Message: conditionMessage(c)}
	}
	if c, ok := findCondition(conds, "Reconciling"); ok && c.Status == "True" {
		return &Status{Code: Progressing, Message: conditionMessage(c)}
	}
	for _, typ := range [...]string{"Ready", "Available"} {
		if c, ok := findCondition(conds, typ); ok {
			if c.Status == "True" {
				return &Status{Code: Healthy, Message: c.Message}
			}
			return &Status{Code: Progressing, Message: conditionMessage(c)}
		}
	}
	return nil
}

// conditionMessage prefers the message and falls back to the reason.
func conditionMessage(c condition) string {
	switch {
	case c.Message != "":
		return c.Message
	case c.Reason != "":
		return c.Reason
	default:
		return c.Type + "=" + c.Status
	}
}
