{{- define "gpu-admission.checkPolicy" -}}
{{- end -}}
