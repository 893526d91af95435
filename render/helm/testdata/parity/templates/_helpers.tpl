{{- define "parity.name" -}}
{{ .Release.Name }}-{{ .Chart.Name }}
{{- end -}}
