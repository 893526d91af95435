package chartserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/testfiles"
)

// Chart writes a chart folder: Chart.yaml (apiVersion v2) for name and
// version, plus files (slash-separated path to content), and returns it.
func Chart(t testing.TB, name, version string, files map[string]string) string {
	t.Helper()
	all := map[string]string{"Chart.yaml": fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\n", name, version)}
	for k, v := range files {
		all[k] = v
	}
	return testfiles.Tree(t, all)
}

// WebChart writes a small chart: a ConfigMap whose data names the chart
// version and a value, and a Deployment of one replica (which kwok makes
// Available), with values.yaml holding greeting: hello.
func WebChart(t testing.TB, name, version string) string {
	t.Helper()
	return Chart(t, name, version, map[string]string{
		"values.yaml": "greeting: hello\nreplicas: 1\n",
		"templates/configmap.yaml": strings.TrimSpace(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
  labels:
    chart: {{ .Chart.Name }}-{{ .Chart.Version }}
data:
  greeting: {{ .Values.greeting | quote }}
  version: {{ .Chart.Version | quote }}
  namespace: {{ .Release.Namespace | quote }}
`) + "\n",
		"templates/deployment.yaml": strings.TrimSpace(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}-web}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}-web}
    spec:
      containers:
      - name: web
        image: registry.k8s.io/pause:3.10
`) + "\n",
	})
}
