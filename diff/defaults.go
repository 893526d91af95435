package diff

import (
	"math"
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
// only fill absent fields, so an explicit value is always compared as
// written.
//
// Defaults fill stored objects only: live, and the predicted result of a
// merge, never desired (or last-applied) before it is merged. The server
// defaults what a write leaves absent after merging: a default applied to
// desired first would overwrite a live value desired does not set (the
// pull policy derived from an earlier image, a partition another manager
// set) and predict a change no sync makes. So a default only fills a field
// the predicted object really lacks, and is computed from the predicted
// object's own values (its image, its strategy type, its port).
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
		return defaultHTTPGet
	case reflect.TypeOf(corev1.PodTemplateSpec{}), reflect.TypeOf(batchv1.JobTemplateSpec{}):
		return defaultTemplate
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

// setAbsent returns a default of one scalar field (a map or slice value
// would be shared by every object it fills).
func setAbsent(key string, value any) func(map[string]any) {
	return func(m map[string]any) {
		if m[key] == nil {
			m[key] = value
		}
	}
}

func setAll(m map[string]any, kv ...any) {
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		if m[k] == nil {
			m[k] = kv[i+1]
		}
	}
}

func defaultContainer(m map[string]any) {
	setAll(m, "terminationMessagePath", "/dev/termination-log", "terminationMessagePolicy", "File")
	// resources is a struct value: the server always writes it.
	if m["resources"] == nil {
		m["resources"] = map[string]any{}
	}
	if m["imagePullPolicy"] == nil {
		if image, ok := m["image"].(string); ok {
			m["imagePullPolicy"] = pullPolicyFor(image)
		}
	}
}

// pullPolicyFor is the server's default pull policy: Always for an image
// tagged latest, or without a tag unless pinned by digest; IfNotPresent
// otherwise (nginx:latest@sha256:... is Always: its tag is latest).
func pullPolicyFor(image string) string {
	name, _, digest := strings.Cut(image, "@")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	_, tag, tagged := strings.Cut(name, ":")
	if tag == "latest" || (!tagged && !digest) {
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

// defaultTemplate: a template's metadata is a struct value, which the
// server always writes (a fresh map each time: defaults never share).
func defaultTemplate(m map[string]any) {
	if m["metadata"] == nil {
		m["metadata"] = map[string]any{}
	}
}

func defaultHTTPGet(m map[string]any) {
	setAll(m, "path", "/", "scheme", "HTTP")
}

func defaultProbe(m map[string]any) {
	setAll(m, "timeoutSeconds", int64(1), "periodSeconds", int64(10), "successThreshold", int64(1), "failureThreshold", int64(3))
}

// defaultServiceSpec: every Service gets sessionAffinity None and its type
// ClusterIP; the internal traffic policy Cluster is for the types with a
// cluster IP, the external one for the externally reachable (NodePort,
// LoadBalancer, external IPs); a port's targetPort is its port.
func defaultServiceSpec(m map[string]any) {
	typ, _ := m["type"].(string)
	if typ == "" {
		typ = "ClusterIP"
		m["type"] = typ
	}
	setAll(m, "sessionAffinity", "None")
	if typ == "ClusterIP" || typ == "NodePort" || typ == "LoadBalancer" {
		setAll(m, "internalTrafficPolicy", "Cluster")
	}
	externalIPs, _ := m["externalIPs"].([]any)
	if typ == "NodePort" || typ == "LoadBalancer" || (typ == "ClusterIP" && len(externalIPs) > 0) {
		setAll(m, "externalTrafficPolicy", "Cluster")
	}
	if typ == "LoadBalancer" {
		setAll(m, "allocateLoadBalancerNodePorts", true)
	}
	if ports, ok := m["ports"].([]any); ok {
		for _, p := range ports {
			if pm, ok := p.(map[string]any); ok {
				if pm["targetPort"] == nil {
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
	if m["strategy"] == nil {
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
	// Only a type the server defaults brings a rollingUpdate with it: an
	// explicit type RollingUpdate without one stays without one. (The
	// server also fills rollingUpdate.maxUnavailable 1 where the
	// MaxUnavailableStatefulSet feature is on, by default from 1.37; that
	// depends on the server's version and is left to the live object.)
	if m["updateStrategy"] == nil {
		m["updateStrategy"] = map[string]any{}
	}
	if s, ok := m["updateStrategy"].(map[string]any); ok {
		if t, _ := s["type"].(string); t == "" {
			s["type"] = "RollingUpdate"
			if s["rollingUpdate"] == nil {
				s["rollingUpdate"] = map[string]any{}
			}
		}
		if ru, ok := s["rollingUpdate"].(map[string]any); ok && s["type"] == "RollingUpdate" {
			setAll(ru, "partition", int64(0))
		}
	}
	if m["persistentVolumeClaimRetentionPolicy"] == nil {
		m["persistentVolumeClaimRetentionPolicy"] = map[string]any{"whenDeleted": "Retain", "whenScaled": "Retain"}
	}
}

func defaultDaemonSetSpec(m map[string]any) {
	setAll(m, "revisionHistoryLimit", int64(10))
	if m["updateStrategy"] == nil {
		m["updateStrategy"] = map[string]any{}
	}
	if s, ok := m["updateStrategy"].(map[string]any); ok {
		if t, _ := s["type"].(string); t == "" || t == "RollingUpdate" {
			s["type"] = "RollingUpdate"
			ru, ok := s["rollingUpdate"].(map[string]any)
			if !ok {
				ru = map[string]any{}
				s["rollingUpdate"] = ru
			}
			setAll(ru, "maxUnavailable", int64(1), "maxSurge", int64(0))
		}
	}
}

// defaultJobSpec: completions is 1 only for a Job that sets neither it nor
// parallelism (a work queue sets parallelism alone and keeps completions
// unset); a Job with a per-index backoff limit has no overall limit.
func defaultJobSpec(m map[string]any) {
	if m["completions"] == nil && m["parallelism"] == nil {
		m["completions"] = int64(1)
	}
	backoff := int64(6)
	if m["backoffLimitPerIndex"] != nil {
		backoff = math.MaxInt32
	}
	setAll(m, "parallelism", int64(1), "backoffLimit", backoff, "completionMode", "NonIndexed", "suspend", false)
}

func defaultCronJobSpec(m map[string]any) {
	setAll(m, "concurrencyPolicy", "Allow", "suspend", false,
		"successfulJobsHistoryLimit", int64(3), "failedJobsHistoryLimit", int64(1))
}
