package health

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// jobHealth follows Argo CD, reading only conditions whose status is True
// (Kubernetes 1.31+ adds FailureTarget and SuccessCriteriaMet before the
// terminal ones, and a resumed Job keeps Suspended=False):
//   - Failed: Degraded with the condition message;
//   - Complete: Healthy;
//   - Suspended: Suspended;
//   - otherwise Progressing.
func jobHealth(u *unstructured.Unstructured) *Status {
	conds := conditions(u.Object)
	if c, ok := findCondition(conds, "Failed"); ok && c.Status == "True" {
		msg := c.Message
		if msg == "" {
			msg = c.Reason
		}
		return &Status{Code: Degraded, Message: msg}
	}
	if c, ok := findCondition(conds, "Complete"); ok && c.Status == "True" {
		return &Status{Code: Healthy, Message: c.Message}
	}
	if c, ok := findCondition(conds, "Suspended"); ok && c.Status == "True" {
		return &Status{Code: Suspended, Message: c.Message}
	}
	if boolean(u.Object, "spec", "suspend") {
		return &Status{Code: Suspended, Message: "Job is suspended"}
	}
	return &Status{Code: Progressing}
}

// cronJobHealth follows Argo CD's script, with one refinement:
//   - spec.suspend: Suspended;
//   - never scheduled: Healthy (nothing has run, nothing failed);
//   - scheduled but never succeeded: Progressing while a Job is active,
//     else Degraded;
//   - the last success is older than the last schedule: Progressing while
//     a Job is active (the run is in flight), else Degraded;
//   - otherwise Healthy.
func cronJobHealth(u *unstructured.Unstructured) *Status {
	obj := u.Object
	if boolean(obj, "spec", "suspend") {
		return &Status{Code: Suspended, Message: "CronJob is Suspended"}
	}
	scheduled, okS := parseTime(str(obj, "status", "lastScheduleTime"))
	if !okS {
		return &Status{Code: Healthy, Message: "The CronJob has not been scheduled yet"}
	}
	active := len(slice(obj, "status", "active")) > 0
	succeeded, okT := parseTime(str(obj, "status", "lastSuccessfulTime"))
	if !okT || succeeded.Before(scheduled) {
		if active {
			return &Status{Code: Progressing, Message: "The CronJob's last scheduled Job is running"}
		}
		return &Status{Code: Degraded, Message: "CronJob has not completed its last execution successfully"}
	}
	return &Status{Code: Healthy, Message: "The CronJob has completed its last execution successfully"}
}

func parseTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}
