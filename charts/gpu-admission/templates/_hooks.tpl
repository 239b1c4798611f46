{{- /* The pod spec of the chart's kubectl hooks: Pod Security restricted (the release namespace
enforces it), no writable root, HOME on an emptyDir for kubectl's discovery cache; from the values'
kubectl image and pull secrets, on the nodes of the values' node selector. It tolerates the values'
taints and every NoSchedule taint besides (dedicated pools, cordoned nodes, control-plane nodes), as a
DaemonSet's pods tolerate cordons: a hook that finds no node blocks helm uninstall until Helm's
timeout. NoExecute taints (a node not ready or unreachable) it does not tolerate. */ -}}
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
tolerations:
{{- with .root.Values.tolerations }}
{{- toYaml . | nindent 0 }}
{{- end }}
- operator: Exists
  effect: NoSchedule
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
