package benchdata

import (
	"fmt"
	"testing/fstest"
)

// HelmChart returns the files of a chart with n templates under prefix:
// Deployments, Services and ConfigMaps in turn, using a helper, ranges,
// pipelines and values, as real charts do. It renders to n objects.
func HelmChart(prefix string, n int) fstest.MapFS {
	files := fstest.MapFS{
		prefix + "/Chart.yaml":  {Data: []byte("apiVersion: v2\nname: big\nversion: 0.1.0\n")},
		prefix + "/values.yaml": {Data: []byte("replicas: 2\nimage: nginx:1.27\nlabels:\n  team: a\n  tier: web\n")},
		prefix + "/templates/_helpers.tpl": {Data: []byte(`{{- define "big.labels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- range $k, $v := .Values.labels }}
{{ $k }}: {{ $v | quote }}
{{- end }}
{{- end -}}
`)},
	}
	for i := 0; i < n; i++ {
		var body string
		switch i % 3 {
		case 0:
			body = fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-d%[1]d
  labels:
    {{- include "big.labels" . | nindent 4 }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels:
      app: d%[1]d
  template:
    metadata:
      labels:
        app: d%[1]d
    spec:
      containers:
        - name: c
          image: {{ .Values.image | quote }}
          env:
            {{- range $i, $e := until 5 }}
            - name: E{{ $i }}
              value: {{ printf "v-%%d" $i | quote }}
            {{- end }}
`, i)
		case 1:
			body = fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}-s%d\n  labels:\n    {{- include \"big.labels\" . | nindent 4 }}\nspec:\n  ports:\n    - port: 80\n", i)
		default:
			body = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-c%d\ndata:\n  {{- range $k, $v := .Values.labels }}\n  {{ $k }}: {{ $v | upper | quote }}\n  {{- end }}\n", i)
		}
		files[fmt.Sprintf("%s/templates/t%02d.yaml", prefix, i)] = &fstest.MapFile{Data: []byte(body)}
	}
	return files
}
