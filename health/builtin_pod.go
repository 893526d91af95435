package health

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// AnnotationIgnoreRestartPolicy set to "true" on a Pod judges it as if its
// restart policy were Always, as Argo CD does: a running Never/OnFailure Pod
// that is Ready counts as Healthy instead of Progressing.
const AnnotationIgnoreRestartPolicy = "argocd.argoproj.io/ignore-restart-policy"

// podHealth follows Argo CD:
//   - restart policy Always and a container waiting with a reason that
//     starts with "Err" or ends with "Error" or "BackOff" (ErrImagePull,
//     CrashLoopBackOff, ...): Degraded, with the waiting messages and, for a
//     crash loop, the last termination reason (OOMKilled) and exit code;
//   - phase Pending: Progressing; Succeeded: Healthy;
//   - phase Failed: Degraded with the pod message, else the first container
//     message, OOMKilled, or non-zero exit code;
//   - phase Running, policy Always: Healthy if Ready, Degraded if not Ready
//     and a container has terminated before, else Progressing;
//   - phase Running, policy Never or OnFailure: Progressing (such pods are
//     usually hooks, which succeed only when they finish);
//   - otherwise Unknown.
func podHealth(u *unstructured.Unstructured) *Status {
	obj := u.Object
	policy := str(obj, "spec", "restartPolicy")
	if policy == "" {
		policy = "Always"
	}
	if u.GetAnnotations()[AnnotationIgnoreRestartPolicy] == "true" {
		policy = "Always"
	}
	message := str(obj, "status", "message")
	containers := slice(obj, "status", "containerStatuses")
	if policy == "Always" {
		var msgs []string
		for _, c := range containers {
			cs, _ := c.(map[string]any)
			reason := str(cs, "state", "waiting", "reason")
			if strings.HasPrefix(reason, "Err") || strings.HasSuffix(reason, "Error") || strings.HasSuffix(reason, "BackOff") {
				msg := str(cs, "state", "waiting", "message")
				if msg == "" {
					msg = fmt.Sprintf("container %q is in %s", str(cs, "name"), reason)
				}
				if last := str(cs, "lastState", "terminated", "reason"); last != "" {
					msg += fmt.Sprintf(" (last termination: %s, exit code %d)", last, num0(cs, "lastState", "terminated", "exitCode"))
				}
				msgs = append(msgs, msg)
			}
		}
		if len(msgs) > 0 {
			return &Status{Code: Degraded, Message: strings.Join(msgs, ", ")}
		}
	}
	switch str(obj, "status", "phase") {
	case "Pending":
		return &Status{Code: Progressing, Message: message}
	case "Succeeded":
		return &Status{Code: Healthy, Message: message}
	case "Failed":
		if message != "" {
			return &Status{Code: Degraded, Message: message}
		}
		all := append(append([]any{}, slice(obj, "status", "initContainerStatuses")...), containers...)
		for _, c := range all {
			cs, _ := c.(map[string]any)
			if m := terminatedMessage(cs); m != "" {
				return &Status{Code: Degraded, Message: m}
			}
		}
		return &Status{Code: Degraded}
	case "Running":
		if policy != "Always" {
			return &Status{Code: Progressing, Message: message}
		}
		if c, ok := findCondition(conditions(obj), "Ready"); ok && c.Status == "True" {
			return &Status{Code: Healthy, Message: message}
		}
		for _, c := range containers {
			cs, _ := c.(map[string]any)
			if _, ok, _ := unstructured.NestedMap(cs, "lastState", "terminated"); ok {
				if m := terminatedMessage(map[string]any{"name": cs["name"], "state": cs["lastState"]}); m != "" {
					return &Status{Code: Degraded, Message: m}
				}
				return &Status{Code: Degraded, Message: message}
			}
		}
		return &Status{Code: Progressing, Message: message}
	}
	return &Status{Code: Unknown, Message: message}
}

// terminatedMessage explains a terminated container: its message, else
// OOMKilled, else a non-zero exit code.
func terminatedMessage(cs map[string]any) string {
	if _, ok, _ := unstructured.NestedMap(cs, "state", "terminated"); !ok {
		return ""
	}
	if m := str(cs, "state", "terminated", "message"); m != "" {
		return m
	}
	if r := str(cs, "state", "terminated", "reason"); r == "OOMKilled" {
		return fmt.Sprintf("container %q was OOMKilled", str(cs, "name"))
	}
	if code := num0(cs, "state", "terminated", "exitCode"); code != 0 {
		return fmt.Sprintf("container %q failed with exit code %d", str(cs, "name"), code)
	}
	return ""
}
