{{- /* secret mode: cert-manager's changes to the Deployment and RBAC (the service reads the
certificate from Secret gpu-admission-tls and manages none), with the values' CA in the webhooks. */ -}}
{{- define "gpu-admission.secretCertificates" -}}
{{- $root := .root -}}
{{- if not $root.Values.certificates.caBundle -}}
{{- fail "certificates.caBundle: with certificates.mode secret, give the CA that signed Secret gpu-admission-tls (base64 -w0 ca.crt)" -}}
{{- end -}}
{{- $k := $root.Files.Get "manifests/cert-manager/kustomization.yaml" | fromYaml -}}
{{- $objects := .objects -}}
{{- range $k.patches -}}
  {{- if .path -}}
    {{- range (include "gpu-admission.documents" (dict "root" $root "file" (printf "manifests/cert-manager/%s" .path)) | fromJson).v -}}
      {{- $objects = (include "gpu-admission.strategicPatch" (dict "objects" $objects "patch" .) | fromJson).v -}}
    {{- end -}}
  {{- else if not .target -}}
    {{- $objects = (include "gpu-admission.strategicPatch" (dict "objects" $objects "patch" (fromYaml .patch)) | fromJson).v -}}
  {{- end -}}
{{- end -}}
{{- range $objects -}}
  {{- if has .kind (list "MutatingWebhookConfiguration" "ValidatingWebhookConfiguration") -}}
    {{- range .webhooks -}}{{- $_ := set .clientConfig "caBundle" $root.Values.certificates.caBundle -}}{{- end -}}
  {{- end -}}
{{- end -}}
{{- toJson (dict "v" $objects) -}}
{{- end -}}

{{- /* The values' changes to the rendered objects. */ -}}
{{- define "gpu-admission.customize" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $image := printf "%s:%s" $v.image.repository ($v.image.tag | default $root.Chart.AppVersion) -}}
{{- $out := list -}}
{{- range .objects -}}
  {{- $o := . -}}
  {{- if and (eq $o.kind "Namespace") (eq $o.metadata.name $root.Release.Namespace) (not $v.namespace.create) -}}
    {{- continue -}}
  {{- end -}}
  {{- if and (eq $o.kind "ConfigMap") (eq $o.metadata.name "gpu-admission-policy") -}}
    {{- $policy := get $o.data "policy.yaml" -}}
    {{- with $v.policy -}}{{- $policy = . -}}{{- end -}}
    {{- if and $root.Release.IsUpgrade (eq $v.policyOnUpgrade "keep") -}}
      {{- $live := lookup "v1" "ConfigMap" $root.Release.Namespace "gpu-admission-policy" -}}
      {{- if and $live $live.data (hasKey $live.data "policy.yaml") -}}{{- $policy = get $live.data "policy.yaml" -}}{{- end -}}
    {{- end -}}
    {{- $_ := set $o.data "policy.yaml" $policy -}}
  {{- end -}}
  {{- if and (eq $o.kind "Deployment") (eq $o.metadata.name "gpu-admission") -}}
    {{- $spec := $o.spec.template.spec -}}
    {{- $_ := set $o.spec "replicas" $v.replicas -}}
    {{- $container := first $spec.containers -}}
    {{- $_ := set $container "image" $image -}}
    {{- with $v.image.pullPolicy -}}{{- $_ := set $container "imagePullPolicy" . -}}{{- end -}}
    {{- with $v.resources -}}{{- $_ := set $container "resources" . -}}{{- end -}}
    {{- with $v.jvmOptions -}}{{- $_ := set $container "env" (append $container.env (dict "name" "JAVA_OPTS_APPEND" "value" .)) -}}{{- end -}}
    {{- with $v.imagePullSecrets -}}{{- $_ := set $spec "imagePullSecrets" . -}}{{- end -}}
    {{- with $v.tolerations -}}{{- $_ := set $spec "tolerations" . -}}{{- end -}}
    {{- with $v.nodeSelector -}}{{- $_ := set $spec "nodeSelector" . -}}{{- end -}}
    {{- with $v.priorityClassName -}}{{- $_ := set $spec "priorityClassName" . -}}{{- end -}}
    {{- $podMetadata := $o.spec.template.metadata -}}
    {{- with $v.podLabels -}}{{- $_ := set $podMetadata "labels" (merge (deepCopy ($podMetadata.labels | default dict)) .) -}}{{- end -}}
    {{- with $v.podAnnotations -}}{{- $_ := set $podMetadata "annotations" (merge (deepCopy ($podMetadata.annotations | default dict)) .) -}}{{- end -}}
  {{- end -}}
  {{- if and (eq $o.kind "DaemonSet") (eq $o.metadata.name "gpu-admission-node-agent") -}}
    {{- range $agent := $o.spec.template.spec.containers -}}
      {{- if hasPrefix "gpu-admission/gpu-admission:" $agent.image -}}{{- $_ := set $agent "image" $image -}}{{- end -}}
      {{- with $v.image.pullPolicy -}}{{- $_ := set $agent "imagePullPolicy" . -}}{{- end -}}
    {{- end -}}
    {{- with $v.imagePullSecrets -}}{{- $_ := set $o.spec.template.spec "imagePullSecrets" . -}}{{- end -}}
    {{- with $v.nodeAgent.devicePlugin.serve -}}
      {{- $agent := first $o.spec.template.spec.containers -}}
      {{- $_ := set $agent "env" (append $agent.env (dict "name" "GPU_ADMISSION_NODE_AGENT_DEVICE_PLUGIN_SERVE" "value" .)) -}}
    {{- end -}}
  {{- end -}}
  {{- if and (eq $o.kind "NetworkPolicy") (eq $o.metadata.name "gpu-admission") -}}
    {{- if not $v.networkPolicy.apiServerCIDRs -}}
    {{- fail "networkPolicy.apiServerCIDRs: with networkPolicy.enabled, give the API server's addresses as CIDRs (each IP of kubectl get endpointslices -n default -l kubernetes.io/service-name=kubernetes, as a /32): without them the API server could not call the webhook" -}}
    {{- end -}}
    {{- range $o.spec.ingress -}}
      {{- $from := list -}}
      {{- range .from -}}
        {{- if and .ipBlock (eq .ipBlock.cidr "API_SERVER_CIDR") -}}
          {{- range $v.networkPolicy.apiServerCIDRs -}}{{- $from = append $from (dict "ipBlock" (dict "cidr" .)) -}}{{- end -}}
        {{- else -}}
          {{- $from = append $from . -}}
        {{- end -}}
      {{- end -}}
      {{- $_ := set . "from" $from -}}
    {{- end -}}
  {{- end -}}
  {{- with $v.commonLabels -}}{{- $_ := set $o.metadata "labels" (merge (deepCopy ($o.metadata.labels | default dict)) .) -}}{{- end -}}
  {{- with $v.commonAnnotations -}}{{- $_ := set $o.metadata "annotations" (merge (deepCopy ($o.metadata.annotations | default dict)) .) -}}{{- end -}}
  {{- $out = append $out $o -}}
{{- end -}}
{{- toJson (dict "v" $out) -}}
{{- end -}}
