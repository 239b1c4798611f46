{{- /*
The labels and annotations of an object's metadata, with the values' commonLabels and
commonAnnotations added: (dict "root" $ "labels" (dict ...) "annotations" (dict ...)), written at
indent 2 after a newline, or nothing when both are empty. An object's own keys win.
*/ -}}
{{- define "gpu-admission.tags" -}}
{{- $labels := merge (deepCopy (.labels | default dict)) (.root.Values.commonLabels | default dict) -}}
{{- $annotations := merge (deepCopy (.annotations | default dict)) (.root.Values.commonAnnotations | default dict) -}}
{{- with $labels }}{{ printf "\n" }}{{ dict "labels" . | toYaml | trimSuffix "\n" | indent 2 }}{{ end -}}
{{- with $annotations }}{{ printf "\n" }}{{ dict "annotations" . | toYaml | trimSuffix "\n" | indent 2 }}{{ end -}}
{{- end -}}

{{- /* The image of the webhook and of the node agent: the values' repository, and tag or appVersion;
-native appended for the native executables' image (image.flavour native). */ -}}
{{- define "gpu-admission.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}{{ if eq .Values.image.flavour "native" }}-native{{ end }}
{{- end -}}

{{- /*
The node agent's namespace: its pods mount host paths, which the release namespace's Pod Security
level (restricted) refuses. nodeAgent.namespace, or the release namespace with -node appended.
*/ -}}
{{- define "gpu-admission.nodeNamespace" -}}
{{- $name := .Values.nodeAgent.namespace | default (printf "%s-node" .Release.Namespace) -}}
{{- if gt (len $name) 63 -}}
{{- fail (printf "nodeAgent.namespace: %q is longer than 63 characters; set nodeAgent.namespace to a shorter name" $name) -}}
{{- end -}}
{{- $name -}}
{{- end -}}

{{- /* With cert-manager: its CA injector writes the webhooks' caBundle. */ -}}
{{- define "gpu-admission.webhookAnnotations" -}}
{{- if eq .Values.certificates.mode "cert-manager" -}}
cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/gpu-admission-tls
{{- end -}}
{{- end -}}
{{- /* With certificates.mode secret: the values' CA as the webhooks' caBundle, at clientConfig's indent. */ -}}
{{- define "gpu-admission.caBundle" -}}
{{- if eq .Values.certificates.mode "secret" -}}
{{- if not .Values.certificates.caBundle -}}
{{- fail "certificates.caBundle: with certificates.mode secret, give the CA that signed Secret gpu-admission-tls (base64 -w0 ca.crt)" -}}
{{- end -}}
{{ printf "\n" }}      caBundle: {{ .Values.certificates.caBundle }}
{{- end -}}
{{- end -}}
