{{- /* The pod spec of the chart's kubectl hooks: Pod Security restricted (the release namespace
enforces it), no writable root, HOME on an emptyDir for kubectl's discovery cache; on the nodes the
webhook may run on (the values' tolerations and node selector), from the values' kubectl image and
pull secrets, so that a hook runs wherever the chart runs. */ -}}
{{- define "gpu-admission.kubectlPod" -}}
serviceAccountName: {{ .serviceAccount }}
restartPolicy: Never
enableServiceLinks: false
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  seccompProfile:
    type: RuntimeDefault
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.nodeSelector }}
nodeSelector:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.tolerations }}
tolerations:
{{- toYaml . | nindent 2 }}
{{- end }}
containers:
- name: kubectl
  image: {{ .root.Values.kubectlImage.repository }}:{{ .root.Values.kubectlImage.tag }}
  {{- with .root.Values.kubectlImage.pullPolicy }}
  imagePullPolicy: {{ . }}
  {{- end }}
  command: [kubectl]
  args:
{{- toYaml .args | nindent 2 }}
  env:
  - name: HOME
    value: /tmp
  securityContext:
    allowPrivilegeEscalation: false
    readOnlyRootFilesystem: true
    capabilities:
      drop: [ALL]
  resources:
    requests: {cpu: 10m, memory: 64Mi}
    limits: {memory: 128Mi}
  volumeMounts:
  - name: tmp
    mountPath: /tmp
{{- with .mounts }}
{{- toYaml . | nindent 2 }}
{{- end }}
volumes:
- name: tmp
  emptyDir: {}
{{- with .volumes }}
{{- toYaml . | nindent 0 }}
{{- end }}
{{- end -}}
