package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// deploymentHealth follows Argo CD:
//   - spec.paused: Suspended;
//   - observedGeneration behind generation: Progressing;
//   - a Progressing condition with reason ProgressDeadlineExceeded: Degraded;
//   - fewer updated replicas than desired, old replicas still present, or
//     fewer available than updated: Progressing;
//   - otherwise Healthy.
func deploymentHealth(u *unstructured.Unstructured) *Status {
	obj := u.Object
	if boolean(obj, "spec", "paused") {
		return &Status{Code: Suspended, Message: "Deployment is paused"}
	}
	gen, _ := num(obj, "metadata", "generation")
	observed, _ := num(obj, "status", "observedGeneration")
	if gen > observed {
		return &Status{Code: Progressing, Message: "Waiting for rollout to finish: observed deployment generation less than desired generation"}
	}
	if c, ok := findCondition(conditions(obj), "Progressing"); ok && c.Reason == "ProgressDeadlineExceeded" {
		return statusf(Degraded, "Deployment %q exceeded its progress deadline", u.GetName())
	}
	updated := num0(obj, "status", "updatedReplicas")
	replicas := num0(obj, "status", "replicas")
	available := num0(obj, "status", "availableReplicas")
	if desired, ok := num(obj, "spec", "replicas"); ok && updated < desired {
		return statusf(Progressing, "Waiting for rollout to finish: %d out of %d new replicas have been updated...", updated, desired)
	}
	if replicas > updated {
		return statusf(Progressing, "Waiting for rollout to finish: %d old replicas are pending termination...", replicas-updated)
	}
	if available < updated {
		return statusf(Progressing, "Waiting for rollout to finish: %d of %d updated replicas are available...", available, updated)
	}
	return &Status{Code: Healthy}
}

// statefulSetHealth follows Argo CD:
//   - observedGeneration unset or behind: Progressing;
//   - fewer ready replicas than desired: Progressing;
//   - RollingUpdate with a partition: Progressing until replicas-partition
//     pods are updated, then Healthy;
//   - OnDelete: Healthy once pods are ready (the controller never updates
//     pods by itself, so waiting for revisions would wait forever);
//   - current revision differs from update revision: Progressing;
//   - otherwise Healthy.
func statefulSetHealth(u *unstructured.Unstructured) *Status {
	obj := u.Object
	gen, _ := num(obj, "metadata", "generation")
	observed, ok := num(obj, "status", "observedGeneration")
	if !ok || observed == 0 || gen > observed {
		return &Status{Code: Progressing, Message: "Waiting for statefulset spec update to be observed..."}
	}
	ready := num0(obj, "status", "readyReplicas")
	desired, hasDesired := num(obj, "spec", "replicas")
	if hasDesired && ready < desired {
		return statusf(Progressing, "Waiting for %d pods to be ready...", desired-ready)
	}
	strategy := str(obj, "spec", "updateStrategy", "type")
	if strategy == "OnDelete" {
		return statusf(Healthy, "statefulset has %d ready pods", ready)
	}
	if partition, ok := num(obj, "spec", "updateStrategy", "rollingUpdate", "partition"); ok && hasDesired && partition > 0 {
		updated := num0(obj, "status", "updatedReplicas")
		if updated < desired-partition {
			return statusf(Progressing, "Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...", updated, desired-partition)
		}
		return statusf(Healthy, "partitioned roll out complete: %d new pods have been updated...", updated)
	}
	current, update := str(obj, "status", "currentRevision"), str(obj, "status", "updateRevision")
	if update != "" && current != update {
		return statusf(Progressing, "waiting for statefulset rolling update to complete %d pods at revision %s...", num0(obj, "status", "updatedReplicas"), update)
	}
	return statusf(Healthy, "statefulset rolling update complete %d pods at revision %s...", num0(obj, "status", "currentReplicas"), current)
}

// daemonSetHealth follows Argo CD:
//   - observedGeneration behind: Progressing;
//   - OnDelete: Healthy (pods change only when deleted);
//   - fewer updated than desired pods, or fewer available: Progressing;
//   - otherwise Healthy.
func daemonSetHealth(u *unstructured.Unstructured) *Status {
	obj := u.Object
	gen, _ := num(obj, "metadata", "generation")
	observed, _ := num(obj, "status", "observedGeneration")
	if gen > observed {
		return &Status{Code: Progressing, Message: "Waiting for rollout to finish: observed daemon set generation less than desired generation"}
	}
	desired := num0(obj, "status", "desiredNumberScheduled")
	updated := num0(obj, "status", "updatedNumberScheduled")
	available := num0(obj, "status", "numberAvailable")
	if str(obj, "spec", "updateStrategy", "type") == "OnDelete" {
		return statusf(Healthy, "daemon set %d out of %d new pods have been updated", updated, desired)
	}
	if updated < desired {
		return statusf(Progressing, "Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...", u.GetName(), updated, desired)
	}
	if available < desired {
		return statusf(Progressing, "Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...", u.GetName(), available, desired)
	}
	return &Status{Code: Healthy}
}

// replicaSetHealth follows Argo CD:
//   - observedGeneration behind: Progressing;
//   - a ReplicaFailure condition that is True: Degraded (quota, admission);
//   - fewer available replicas than desired: Progressing;
//   - otherwise Healthy.
func replicaSetHealth(u *unstructured.Unstructured) *Status {
	obj := u.Object
	gen, _ := num(obj, "metadata", "generation")
	observed, _ := num(obj, "status", "observedGeneration")
	if gen > observed {
		return &Status{Code: Progressing, Message: "Waiting for rollout to finish: observed replica set generation less than desired generation"}
	}
	if c, ok := findCondition(conditions(obj), "ReplicaFailure"); ok && c.Status == "True" {
		return &Status{Code: Degraded, Message: c.Message}
	}
	available := num0(obj, "status", "availableReplicas")
	if desired, ok := num(obj, "spec", "replicas"); ok && available < desired {
		return statusf(Progressing, "Waiting for rollout to finish: %d out of %d new replicas are available...", available, desired)
	}
	return &Status{Code: Healthy}
}
