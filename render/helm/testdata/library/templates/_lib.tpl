{{- define "library.labels" -}}
app: library
{{- end -}}
