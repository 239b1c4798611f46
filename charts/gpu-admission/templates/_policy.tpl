{{- /*
The policy check at template time: the rules of the webhook's own check (PolicyParser and
PolicyValidator) that a template can apply, with the webhook's messages (path: message), so that
helm template, helm install and helm upgrade refuse such a policy before anything is applied.
ChartPolicyTest runs each rule's bad policy through both and compares the messages. Known keys come
from the built-in default policy (manifests/base/policy-configmap.yaml), which lists every key.
Not checked here (the webhook still refuses them when the ConfigMap is applied, and keeps its last
good policy): value types other than mappings, resource names, label values, kinds, environment
variable names, allocator.topologies matrices and fgdWorkload asks, YAML aliases and merge keys.
*/ -}}
{{- define "gpu-admission.checkPolicy" -}}
{{- $root := .root -}}
{{- $text := "" -}}
{{- range .objects -}}
  {{- if and (eq .kind "ConfigMap") (eq .metadata.name "gpu-admission-policy") -}}{{- $text = get .data "policy.yaml" -}}{{- end -}}
{{- end -}}
{{- $default := first (include "gpu-admission.documents" (dict "root" $root "file" "manifests/base/policy-configmap.yaml") | fromJson).v -}}
{{- $schema := get $default.data "policy.yaml" | fromYaml -}}
{{- $policy := fromYaml $text -}}
{{- $errors := list -}}
{{- if hasKey $policy "Error" -}}
  {{- if contains "cannot unmarshal" $policy.Error -}}
    {{- $errors = append $errors "the policy must be a YAML mapping of keys to values" -}}
  {{- else -}}
    {{- $errors = append $errors (printf "not valid YAML: %s" $policy.Error) -}}
  {{- end -}}
{{- else -}}
  {{- $errors = (include "gpu-admission.policyKeys" (dict "policy" $policy "schema" $schema "at" "") | fromJson).v -}}
  {{- if not $errors -}}
    {{- $errors = (include "gpu-admission.policyValues" (mergeOverwrite (deepCopy $schema) $policy) | fromJson).v -}}
  {{- end -}}
{{- end -}}
{{- if $errors -}}
  {{- fail (printf "policy: the webhook would refuse it (docs/policy.md):\n%s" (join "\n" $errors)) -}}
{{- end -}}
{{- if $root.Values.scheduler.enabled -}}
  {{- $name := toString ((mergeOverwrite (deepCopy $schema) $policy).scheduling.schedulerName | default "") -}}
  {{- if ne $name "gpu-scheduler" -}}
    {{- fail (printf "policy: with scheduler.enabled, scheduling.schedulerName must be gpu-scheduler, the scheduler this chart installs (it is %q): otherwise no GPU pod reaches it" $name) -}}
  {{- end -}}
{{- end -}}
{{- end -}}

{{- /* Unknown keys and sections that are not mappings, section by section. */ -}}
{{- define "gpu-admission.policyKeys" -}}
{{- $errors := list -}}
{{- $known := keys .schema | sortAlpha | join ", " -}}
{{- range $key, $value := .policy -}}
  {{- $path := printf "%s%s" $.at $key -}}
  {{- if not (hasKey $.schema $key) -}}
    {{- if eq $key "<<" -}}
      {{- $errors = append $errors (printf "%s: YAML merge keys (<<) are not supported in the policy; write the keys out" (trimSuffix "." $.at | default "<<")) -}}
    {{- else -}}
      {{- $errors = append $errors (printf "%s: unknown key; known keys here: %s" $path $known) -}}
    {{- end -}}
  {{- else -}}
    {{- $section := get $.schema $key -}}
    {{- if and (kindIs "map" $section) (gt (len $section) 0) -}}
      {{- if kindIs "map" $value -}}
        {{- with (include "gpu-admission.policyKeys" (dict "policy" $value "schema" $section "at" (printf "%s." $path)) | fromJson).v -}}{{- $errors = concat $errors . -}}{{- end -}}
      {{- else if eq $value nil -}}
        {{- $errors = append $errors (printf "%s: must have a value (null is not allowed here)" $path) -}}
      {{- else -}}
        {{- $errors = append $errors (printf "%s: expected a mapping of keys to values" $path) -}}
      {{- end -}}
    {{- end -}}
  {{- end -}}
{{- end -}}
{{- toJson (dict "v" $errors) -}}
{{- end -}}

{{- /* The value rules, on the policy with the default's values for the keys it leaves out. */ -}}
{{- define "gpu-admission.policyValues" -}}
{{- $p := . -}}
{{- $errors := list -}}
{{- $label := "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" -}}
{{- $subdomain := "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$" -}}
{{- $namePart := "^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$" -}}
{{- if ne (toString $p.version) "1" -}}
  {{- $errors = append $errors (printf "version: %v is not supported; this webhook reads version 1" $p.version) -}}
{{- end -}}
{{- $namespaces := list (list "exemptNamespaces" $p.exemptNamespaces) (list "topology.allowedNamespaces" $p.topology.allowedNamespaces) -}}
{{- range $namespaces -}}
  {{- $path := first . -}}
  {{- range $i, $name := last . -}}
    {{- if or (gt (len (toString $name)) 63) (not (regexMatch $label (toString $name))) -}}
      {{- $errors = append $errors (printf "%s[%d]: \"%s\" is not a valid namespace name" $path $i (toString $name)) -}}
    {{- end -}}
  {{- end -}}
{{- end -}}
{{- $labelKeys := list
  (list "optOutLabel" $p.optOutLabel)
  (list "nodeLabels.model" $p.nodeLabels.model) (list "nodeLabels.memory" $p.nodeLabels.memory)
  (list "nodeLabels.count" $p.nodeLabels.count) (list "nodeLabels.pool" $p.nodeLabels.pool)
  (list "nodeLabels.placement" $p.nodeLabels.placement)
  (list "topology.jobLabel" $p.topology.jobLabel) (list "topology.replicaLabel" $p.topology.replicaLabel)
  (list "sharedMemory.selfLimitedAnnotation" $p.sharedMemory.selfLimitedAnnotation)
  (list "gpuModel.modelAnnotation" $p.gpuModel.modelAnnotation) (list "gpuModel.minMemoryAnnotation" $p.gpuModel.minMemoryAnnotation) -}}
{{- range $labelKeys -}}
  {{- $key := toString (last .) -}}
  {{- $name := $key -}}{{- $valid := true -}}
  {{- if contains "/" $key -}}
    {{- $prefix := first (splitList "/" $key) -}}
    {{- $name = trimPrefix (printf "%s/" $prefix) $key -}}
    {{- if or (eq $prefix "") (gt (len $prefix) 253) (not (regexMatch $subdomain $prefix)) -}}{{- $valid = false -}}{{- end -}}
  {{- end -}}
  {{- if or (eq $name "") (gt (len $name) 63) (not (regexMatch $namePart $name)) -}}{{- $valid = false -}}{{- end -}}
  {{- if not $valid -}}
    {{- $errors = append $errors (printf "%s: \"%s\" is not a valid Kubernetes label key" (first .) $key) -}}
  {{- end -}}
{{- end -}}
{{- if eq (toString $p.topology.jobLabel) (toString $p.topology.replicaLabel) -}}
  {{- $errors = append $errors (printf "topology.jobLabel: \"%s\" is also topology.replicaLabel; the job name and the replica count need two labels" $p.topology.jobLabel) -}}
{{- end -}}
{{- $dns := list "ClusterFirst" "ClusterFirstWithHostNet" "Default" "None" -}}
{{- if not (has (toString $p.topology.dnsPolicy) $dns) -}}
  {{- $errors = append $errors (printf "topology.dnsPolicy: \"%s\" is not one of [%s]" (toString $p.topology.dnsPolicy) (join ", " $dns)) -}}
{{- end -}}
{{- $enums := list
  (list "topology.onConflict" $p.topology.onConflict (list "refuse" "skip"))
  (list "failureMode.gpuPods" $p.failureMode.gpuPods (list "open" "closed"))
  (list "failureMode.otherPods" $p.failureMode.otherPods (list "open" "closed"))
  (list "feasibility.onInfeasible" $p.feasibility.onInfeasible (list "refuse" "warn")) -}}
{{- range $enums -}}
  {{- $value := index . 1 -}}
  {{- if not (has (toString $value) (last .)) -}}
    {{- $errors = append $errors (printf "%s: \"%s\" is not one of [%s]" (first .) (toString $value) (join ", " (last .))) -}}
  {{- end -}}
{{- end -}}
{{- $tolerance := $p.gpuModel.memoryTolerancePercent -}}
{{- if or (lt (float64 $tolerance) 0.0) (gt (float64 $tolerance) 50.0) -}}
  {{- $errors = append $errors (printf "gpuModel.memoryTolerancePercent: %v must be between 0 and 50" $tolerance) -}}
{{- end -}}
{{- $scheduler := toString ($p.scheduling.schedulerName | default "") -}}
{{- if and $scheduler (or (gt (len $scheduler) 253) (not (regexMatch $subdomain $scheduler))) -}}
  {{- $errors = append $errors (printf "scheduling.schedulerName: \"%s\" is not a valid scheduler name (a DNS subdomain, such as gpu-scheduler)" $scheduler) -}}
{{- end -}}
{{- toJson (dict "v" $errors) -}}
{{- end -}}
