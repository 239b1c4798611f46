{{- /*
The built-in default policy (server/src/main/resources/policy.yaml, which ManifestsFromChartTest keeps
equal to what this renders in namespace gpu-admission), with the release's namespace exempt.
*/ -}}
{{- define "gpu-admission.defaultPolicy" -}}
# gpu-admission policy, built-in default. Every key is explained in docs/policy.md.
# Put a document like this one under key policy.yaml of ConfigMap gpu-admission-policy in the
# webhook's namespace; keys you leave out keep the values shown here.
version: 1

# Pods in these namespaces are never changed or refused.
exemptNamespaces: [kube-system, kube-public, kube-node-lease, {{ .Release.Namespace }}]

# A pod carrying this label with value "true" is left alone by every rule.
optOutLabel: gpu-admission.io/ignore

# Resources that make a pod a GPU pod; a trailing * matches a prefix.
gpuResources:
  - nvidia.com/gpu
  - aliyun.com/gpu
  - aliyun.com/gpu-mem
  - aliyun.com/gpu-count
  - aliyun.com/gpu-core.percentage
  - nvidia.com/mig-*

nodeLabels:
  model: aliyun.accelerator/nvidia_name
  memory: aliyun.accelerator/nvidia_mem
  count: aliyun.accelerator/nvidia_count
  pool: ack.node.gpu.schedule
  placement: ack.node.gpu.placement

cpuPods:
  keepOffGpuNodes: true
  # DaemonSet pods are always exempt, listed or not.
  exemptOwnerKinds: [DaemonSet]

topology:
  jobLabel: gpu-topology
  replicaLabel: gpu-topology-replica
  wholeGpuResource: nvidia.com/gpu
  resourceName: aliyun.com/gpu
  pool: topology
  hostIPC: true
  hostNetwork: true
  hostPID: true
  dnsPolicy: ClusterFirstWithHostNet
  # Empty: every namespace that is not exempt.
  allowedNamespaces: []
  # A pod that asks for what the API server forbids with a host namespace (shareProcessNamespace
  # with hostPID, a hostPort other than its containerPort with hostNetwork, hostUsers: false):
  # refuse it with the reason, or skip that one setting with a warning.
  onConflict: refuse
  # Place a member asking 2 or more whole GPUs only on GPUs that are all pairwise NVLink-connected
  # (per allocator.topologies; a model without a matrix cannot show NVLink and is refused).
  requireNVLink: false
  # Also write a topology pod's chosen GPUs where ACK's tooling (arena top node) reads them:
  # topology.kubernetes.io/gpu-group and gpu-visible. Unverified against ACK's closed topology
  # device plugin, which may read them too (docs/policy.md).
  ackAnnotations: false

sharedMemory:
  resourceName: aliyun.com/gpu-mem
  isolatedPool: cgpu
  selfLimitedPool: share
  # binpack or spread; leave out to let the node pool's own label decide.
  placement: null
  selfLimitedAnnotation: gpu-admission.io/memory-self-limited
  # Environment variables whose presence in a container says the pod limits its own GPU memory.
  selfLimitedEnv: []

gpuModel:
  modelAnnotation: gpu-admission.io/gpu-model
  minMemoryAnnotation: gpu-admission.io/min-gpu-memory
  # A GPU reporting 16130MiB is sold as 16 GB: accept models this many percent below the minimum.
  memoryTolerancePercent: 3
  # namespace: GPU model (as in the model node label), e.g. ml-team-a: Tesla-V100-SXM2-16GB
  namespaceDefaults: {}

allocator:
  wholeGpu: topology
  memoryShare: fgd-lookahead
  # GPU model: nvidia-smi topo -m output, for nodes that do not publish their own.
  topologies: {}
  # The workload fgd measures fragmentation against: learned from the GPU pods the cluster asks
  # for (pending, running, and those that ended within the window), unless declared here, e.g.
  #   declared: [{gpuMemory: 4, cpu: "2", weight: 30}, {gpus: 1, cpu: "8", weight: 50}]
  fgdWorkload:
    learnedWindowMinutes: 60
    declared: []

failureMode:
  gpuPods: closed
  otherPods: open

# Which scheduler places GPU pods. Empty: leave the pod's schedulerName alone (the cluster's own
# scheduler). manifests/scheduler/ installs a second scheduler that uses this service as its
# extender and sets gpu-scheduler here.
scheduling:
  schedulerName: ""

# A GPU pod no known GPU node can take (more GPUs or GPU memory than the largest node or GPU of its
# pool has, a GPU model or placement no node of its pool carries): refuse it at apply with the fix,
# or warn and admit it (it stays Pending until such a node joins or is labelled). With no GPU node
# known yet, or none in the pod's pool, it is only ever a warning. scaleFromZeroModels: GPU models
# (model label values, "*" for any) whose node pools the cluster autoscaler scales from zero: a pod
# selecting one while no node has it is admitted with a warning instead of refused.
feasibility:
  onInfeasible: refuse
  scaleFromZeroModels: []

# Team quotas from the ElasticQuotaTree in kube-system (docs/quotas.md). enabled: false ignores the
# tree (where ACK's own capacity scheduling enforces it: one tree, one enforcer). onNeverFits: a pod
# or workload asking more than its quota leaf's max, which can never run: refuse it at apply, or
# warn and admit it.
quotas:
  enabled: true
  onNeverFits: warn
{{ end -}}

{{- /* With scheduler.enabled: GPU pods go to the second scheduler; every other key the default's. */ -}}
{{- define "gpu-admission.schedulerPolicy" -}}
# gpu-admission policy: the built-in default (docs/policy.md) except for the keys below.
version: 1
exemptNamespaces: [kube-system, kube-public, kube-node-lease, {{ .Release.Namespace }}]
# GPU pods are placed by the second scheduler of manifests/components/scheduler/.
scheduling:
  schedulerName: gpu-scheduler
{{ end -}}

{{- /*
ConfigMap gpu-admission-policy's data: the values' policy, else the default (the scheduler's with
scheduler.enabled). The values' policy is checked on every install and upgrade, whatever
policyOnUpgrade says; with policyOnUpgrade keep an upgrade then writes back the cluster's policy
(kubectl edit), which the webhook checked when it was applied.
*/ -}}
{{- define "gpu-admission.policyData" -}}
{{- $policy := .Values.policy -}}
{{- if not $policy -}}
  {{- $policy = include (ternary "gpu-admission.schedulerPolicy" "gpu-admission.defaultPolicy" .Values.scheduler.enabled) . -}}
{{- end -}}
{{- include "gpu-admission.checkPolicy" (dict "root" $ "text" $policy) -}}
{{- /* A policy of the values that leaves exemptNamespaces out gets the default's, which names the
       release's namespace (the server's own built-in default names gpu-admission). */ -}}
{{- if and .Values.policy (not (hasKey (fromYaml .Values.policy) "exemptNamespaces")) -}}
  {{- $policy = printf "%s\n# The built-in default's, with the release's namespace (added by the chart).\nexemptNamespaces: [kube-system, kube-public, kube-node-lease, %s]\n" (trimSuffix "\n" $policy) .Release.Namespace -}}
{{- end -}}
{{- if and .Release.IsUpgrade (eq .Values.policyOnUpgrade "keep") -}}
  {{- $live := lookup "v1" "ConfigMap" .Release.Namespace "gpu-admission-policy" -}}
  {{- if and $live $live.data (hasKey $live.data "policy.yaml") -}}{{- $policy = get $live.data "policy.yaml" -}}{{- end -}}
{{- end -}}
{{- if .Values.policy -}}
{{- toYaml (dict "policy.yaml" $policy) | trimSuffix "\n" | indent 2 -}}
{{- else -}}
{{- /* A block as a person writes it: no spaces on the empty lines. The scheduler's ends without a
newline, as kustomize leaves the scheduler component's patch. */ -}}
{{- $block := ternary "|-" "|" .Values.scheduler.enabled -}}
{{- regexReplaceAll "(?m)^ +$" (printf "  policy.yaml: %s\n%s" $block ($policy | trimSuffix "\n" | indent 4)) "" -}}
{{- end -}}
{{- end -}}

{{- /*
The policy check at template time: the rules of the webhook's own check (PolicyParser and
PolicyValidator) that a template can apply, with the webhook's messages (path: message), so that
helm template, helm install and helm upgrade refuse such a policy before anything is applied.
ChartPolicyTest runs each rule's bad policy through both and compares the messages. Known keys come
from the built-in default policy ("gpu-admission.defaultPolicy"), which lists every key.
Not checked here (the webhook still refuses them when the ConfigMap is applied, and keeps its last
good policy): value types other than mappings, resource names, label values, kinds, environment
variable names, allocator.topologies matrices and fgdWorkload asks, YAML aliases and merge keys.
*/ -}}
{{- define "gpu-admission.checkPolicy" -}}
{{- $root := .root -}}
{{- $text := .text -}}
{{- $schema := include "gpu-admission.defaultPolicy" $root | fromYaml -}}
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

{{- /* Unknown keys, and values not of their default's kind (mapping, list, true or false), section by section. */ -}}
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
    {{- else if eq $value nil -}}
    {{- else if and (kindIs "map" $section) (not (kindIs "map" $value)) -}}
      {{- $errors = append $errors (printf "%s: expected a mapping of keys to values" $path) -}}
    {{- else if and (kindIs "slice" $section) (not (kindIs "slice" $value)) -}}
      {{- $errors = append $errors (printf "%s: expected a list" $path) -}}
    {{- else if and (kindIs "bool" $section) (not (kindIs "bool" $value)) -}}
      {{- $errors = append $errors (printf "%s: expected true or false" $path) -}}
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
  (list "feasibility.onInfeasible" $p.feasibility.onInfeasible (list "refuse" "warn"))
  (list "quotas.onNeverFits" $p.quotas.onNeverFits (list "refuse" "warn")) -}}
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
