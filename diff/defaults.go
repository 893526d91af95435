package diff

import (
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// defaultsFor returns the function that fills the API server's defaults into
// an object of Go type typ, or nil. The values are those of the API server's
// defaulting for the stable built-in types (written here from the
// documented API: this package never imports k8s.io/kubernetes). Defaults
// only fill absent fields, on both sides of a comparison alike, so an
// explicit value is always compared as written.
//
// A default never hides another manager's value: merges keep live values
// for fields desired does not set, so a default only fills a field that
// the predicted object really lacks (the server would default it too).
func defaultsFor(typ reflect.Type) func(map[string]any) {
	switch typ {
	case reflect.TypeOf(corev1.Container{}), reflect.TypeOf(corev1.EphemeralContainerCommon{}):
		return defaultContainer
	case reflect.TypeOf(corev1.ContainerPort{}), reflect.TypeOf(corev1.ServicePort{}),
		reflect.TypeOf(corev1.EndpointPort{}):
		return setAbsent("protocol", "TCP")
	case reflect.TypeOf(corev1.PodSpec{}):
		return defaultPodSpec
	case reflect.TypeOf(corev1.Probe{}):
		return defaultProbe
	case reflect.TypeOf(corev1.HTTPGetAction{}):
		return setAbsent("scheme", "HTTP")
	case reflect.TypeOf(corev1.ObjectFieldSelector{}):
		return setAbsent("apiVersion", "v1")
	case reflect.TypeOf(corev1.ConfigMapVolumeSource{}), reflect.TypeOf(corev1.SecretVolumeSource{}),
		reflect.TypeOf(corev1.ProjectedVolumeSource{}), reflect.TypeOf(corev1.DownwardAPIVolumeSource{}):
		return setAbsent("defaultMode", int64(0o644))
	case reflect.TypeOf(corev1.PersistentVolumeClaimSpec{}):
		return setAbsent("volumeMode", "Filesystem")
	case reflect.TypeOf(corev1.ServiceSpec{}):
		return defaultServiceSpec
	case reflect.TypeOf(appsv1.DeploymentSpec{}):
		return defaultDeploymentSpec
	case reflect.TypeOf(corev1.PersistentVolumeClaim{}):
		return defaultClaimTemplate
	case reflect.TypeOf(appsv1.StatefulSetSpec{}):
		return defaultStatefulSetSpec
	case reflect.TypeOf(appsv1.DaemonSetSpec{}):
		return defaultDaemonSetSpec
	case reflect.TypeOf(batchv1.JobSpec{}):
		return defaultJobSpec
	case reflect.TypeOf(batchv1.CronJobSpec{}):
		return defaultCronJobSpec
	}
	return nil
}

func setAbsent(key string, value any) func(map[string]any) {
	return func(m map[string]any) {
		if _, ok := m[key]; !ok {
			m[key] = value
		}
	}
}

func setAll(m map[string]any, kv ...any) {
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		if _, ok := m[k]; !ok {
			m[k] = kv[i+1]
		}
	}
}

func defaultContainer(m map[string]any) {
	setAll(m, "terminationMessagePath", "/dev/termination-log", "terminationMessagePolicy", "File")
	if _, ok := m["imagePullPolicy"]; !ok {
		if image, ok := m["image"].(string); ok {
			m["imagePullPolicy"] = pullPolicyFor(image)
		}
	}
}

// pullPolicyFor is the server's default pull policy: Always for an image
// without a tag or tagged latest (and not pinned by digest), IfNotPresent
// otherwise.
func pullPolicyFor(image string) string {
	if strings.Contains(image, "@") {
		return "IfNotPresent"
	}
	name := image
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	_, tag, ok := strings.Cut(name, ":")
	if !ok || tag == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}

func defaultPodSpec(m map[string]any) {
	setAll(m,
		"restartPolicy", "Always",
		"dnsPolicy", "ClusterFirst",
		"schedulerName", "default-scheduler",
		"terminationGracePeriodSeconds", int64(30),
		"securityContext", map[string]any{},
	)
}

func defaultProbe(m map[string]any) {
	setAll(m, "timeoutSeconds", int64(1), "periodSeconds", int64(10), "successThreshold", int64(1), "failureThreshold", int64(3))
}

func defaultServiceSpec(m map[string]any) {
	typ, _ := m["type"].(string)
	if typ == "" {
		typ = "ClusterIP"
		m["type"] = typ
	}
	if typ == "ExternalName" {
		return
	}
	setAll(m, "sessionAffinity", "None", "internalTrafficPolicy", "Cluster")
	if ports, ok := m["ports"].([]any); ok {
		for _, p := range ports {
			if pm, ok := p.(map[string]any); ok {
				if _, ok := pm["targetPort"]; !ok {
					if port, ok := pm["port"]; ok {
						pm["targetPort"] = port
					}
				}
			}
		}
	}
}

func defaultDeploymentSpec(m map[string]any) {
	setAll(m, "replicas", int64(1), "revisionHistoryLimit", int64(10), "progressDeadlineSeconds", int64(600))
	if _, ok := m["strategy"]; !ok {
		m["strategy"] = map[string]any{"type": "RollingUpdate"}
	}
	if s, ok := m["strategy"].(map[string]any); ok {
		if t, _ := s["type"].(string); t == "RollingUpdate" || t == "" {
			s["type"] = "RollingUpdate"
			ru, ok := s["rollingUpdate"].(map[string]any)
			if !ok {
				ru = map[string]any{}
				s["rollingUpdate"] = ru
			}
			setAll(ru, "maxSurge", "25%", "maxUnavailable", "25%")
		}
	}
}

// defaultClaimTemplate: the server writes apiVersion and kind into a
// StatefulSet's volume claim templates. (A PersistentVolumeClaim object
// always has both already.)
func defaultClaimTemplate(m map[string]any) {
	setAll(m, "apiVersion", "v1", "kind", "PersistentVolumeClaim")
}

func defaultStatefulSetSpec(m map[string]any) {
	setAll(m, "replicas", int64(1), "revisionHistoryLimit", int64(10), "podManagementPolicy", "OrderedReady")
	// A claim template's status (the server writes phase: Pending) means
	// nothing: it is never compared.
	if claims, ok := m["volumeClaimTemplates"].([]any); ok {
		for _, c := range claims {
			if cm, ok := c.(map[string]any); ok {
				delete(cm, "status")
			}
		}
	}
	if _, ok := m["updateStrategy"]; !ok {
		m["updateStrategy"] = map[string]any{"type": "RollingUpdate"}
	}
	if s, ok := m["updateStrategy"].(map[string]any); ok {
		if t, _ := s["type"].(string); t == "RollingUpdate" {
			ru, ok := s["rollingUpdate"].(map[string]any)
			if !ok {
				ru = map[string]any{}
				s["rollingUpdate"] = ru
			}
			setAll(ru, "partition", int64(0))
		}
	}
	if _, ok := m["persistentVolumeClaimRetentionPolicy"]; !ok {
		m["persistentVolumeClaimRetentionPolicy"] = map[string]any{"whenDeleted": "Retain", "whenScaled": "Retain"}
	}
}

func defaultDaemonSetSpec(m map[string]any) {
	setAll(m, "revisionHistoryLimit", int64(10))
	if _, ok := m["updateStrategy"]; !ok {
		m["updateStrategy"] = map[string]any{"type": "RollingUpdate"}
	}
	if s, ok := m["updateStrategy"].(map[string]any); ok {
		if t, _ := s["type"].(string); t == "RollingUpdate" {
			ru, ok := s["rollingUpdate"].(map[string]any)
			if !ok {
				ru = map[string]any{}
				s["rollingUpdate"] = ru
			}
			setAll(ru, "maxUnavailable", int64(1), "maxSurge", int64(0))
		}
	}
}

func defaultJobSpec(m map[string]any) {
	setAll(m, "backoffLimit", int64(6), "completionMode", "NonIndexed", "suspend", false)
	if _, ok := m["parallelism"]; !ok {
		m["parallelism"] = int64(1)
	}
	if _, ok := m["completions"]; !ok {
		m["completions"] = int64(1)
	}
}

func defaultCronJobSpec(m map[string]any) {
	setAll(m, "concurrencyPolicy", "Allow", "suspend", false,
		"successfulJobsHistoryLimit", int64(3), "failedJobsHistoryLimit", int64(1))
}
