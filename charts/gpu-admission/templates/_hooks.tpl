{{- /* The pod spec of the chart's kubectl hooks: Pod Security restricted (namespace gpu-admission
enforces it), no writable root, HOME on an emptyDir for kubectl's discovery cache. */ -}}
{{- define "gpu-admission.kubectlPod" -}}
serviceAccountName: {{ .serviceAccount }}
restartPolicy: Never
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  seccompProfile:
    type: RuntimeDefault
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
{{- toYaml . | nindent 2 }}
{{- end }}
containers:
- name: kubectl
  image: {{ .root.Values.kubectlImage }}
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
