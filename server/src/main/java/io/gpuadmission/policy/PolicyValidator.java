package io.gpuadmission.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/** Checks the values of a typed policy; the parser has already checked keys and types. */
final class PolicyValidator {
  /** A value that breaks a rule, at a key path; the parser adds the line. */
  record Finding(String path, String message) {}

  private static final Pattern KIND = Pattern.compile("[A-Z][A-Za-z0-9]*");
  private static final Pattern ENV_NAME = Pattern.compile("[-._a-zA-Z][-._a-zA-Z0-9]*");
  private static final Set<String> DNS_POLICIES =
      Set.of("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None");

  private final List<Finding> findings = new ArrayList<>();

  private PolicyValidator() {}

  static List<Finding> validate(GpuPolicy policy) {
    var v = new PolicyValidator();
    v.check(policy);
    return List.copyOf(v.findings);
  }

  private void check(GpuPolicy p) {
    if (p.version() != GpuPolicy.CURRENT_VERSION) {
      add("version", p.version() + " is not supported; this webhook reads version " + GpuPolicy.CURRENT_VERSION);
    }
    namespaces("exemptNamespaces", p.exemptNamespaces());
    labelKey("optOutLabel", p.optOutLabel());
    var resources = p.gpuResources();
    for (int i = 0; i < resources.size(); i++) {
      var r = resources.get(i);
      resourceName("gpuResources[" + i + "]", r.endsWith("*") ? r.substring(0, r.length() - 1) + "x" : r);
    }
    var labels = p.nodeLabels();
    labelKey("nodeLabels.model", labels.model());
    labelKey("nodeLabels.memory", labels.memory());
    labelKey("nodeLabels.count", labels.count());
    labelKey("nodeLabels.pool", labels.pool());
    labelKey("nodeLabels.placement", labels.placement());
    var kinds = p.cpuPods().exemptOwnerKinds();
    for (int i = 0; i < kinds.size(); i++) {
      if (!KIND.matcher(kinds.get(i)).matches()) {
        add(
            "cpuPods.exemptOwnerKinds[" + i + "]",
            "\"" + kinds.get(i) + "\" is not a Kubernetes kind (such as DaemonSet)");
      }
    }
    var t = p.topology();
    labelKey("topology.jobLabel", t.jobLabel());
    labelKey("topology.replicaLabel", t.replicaLabel());
    if (t.jobLabel().equals(t.replicaLabel())) {
      add("topology.jobLabel", "\"" + t.jobLabel() + "\" is also topology.replicaLabel; the job name and the replica count need two labels");
    }
    resourceName("topology.wholeGpuResource", t.wholeGpuResource());
    resourceName("topology.resourceName", t.resourceName());
    labelValue("topology.pool", t.pool());
    if (!DNS_POLICIES.contains(t.dnsPolicy())) {
      add("topology.dnsPolicy", "\"" + t.dnsPolicy() + "\" is not one of " + sorted(DNS_POLICIES));
    }
    namespaces("topology.allowedNamespaces", t.allowedNamespaces());
    var s = p.sharedMemory();
    resourceName("sharedMemory.resourceName", s.resourceName());
    labelValue("sharedMemory.isolatedPool", s.isolatedPool());
    labelValue("sharedMemory.selfLimitedPool", s.selfLimitedPool());
    labelKey("sharedMemory.selfLimitedAnnotation", s.selfLimitedAnnotation());
    for (int i = 0; i < s.selfLimitedEnv().size(); i++) {
      var name = s.selfLimitedEnv().get(i);
      if (!ENV_NAME.matcher(name).matches()) {
        add("sharedMemory.selfLimitedEnv[" + i + "]", "\"" + name + "\" is not a valid environment variable name");
      }
    }
    var m = p.gpuModel();
    labelKey("gpuModel.modelAnnotation", m.modelAnnotation());
    labelKey("gpuModel.minMemoryAnnotation", m.minMemoryAnnotation());
    if (m.memoryTolerancePercent() < 0 || m.memoryTolerancePercent() > 50) {
      add("gpuModel.memoryTolerancePercent", m.memoryTolerancePercent() + " must be between 0 and 50");
    }
    topologies(p.allocator().topologies());
    fgdWorkload(p.allocator().fgdWorkload());
    var scaling = p.feasibility().scaleFromZeroModels();
    for (int i = 0; i < scaling.size(); i++) {
      if (!scaling.get(i).equals(FeasibilityPolicy.ANY_MODEL)) {
        labelValue("feasibility.scaleFromZeroModels[" + i + "]", scaling.get(i));
      }
    }
    var scheduler = p.scheduling().schedulerName();
    if (!scheduler.isEmpty() && !KubernetesNames.isSubdomain(scheduler)) {
      add(
          "scheduling.schedulerName",
          "\"" + scheduler + "\" is not a valid scheduler name (a DNS subdomain, such as gpu-scheduler)");
    }
    m.namespaceDefaults()
        .forEach(
            (namespace, model) -> {
              var path = "gpuModel.namespaceDefaults." + namespace;
              if (!KubernetesNames.isNamespace(namespace)) {
                add(path, "\"" + namespace + "\" is not a valid namespace name");
              }
              labelValue(path, model);
            });
  }

  private void topologies(java.util.Map<String, String> topologies) {
    topologies.forEach(
        (model, text) -> {
          var path = "allocator.topologies." + model;
          labelValue(path, model);
          try {
            io.gpuadmission.allocator.TopologyParser.parse(text);
          } catch (IllegalArgumentException e) {
            add(path, "not a usable nvidia-smi topo -m matrix: " + e.getMessage());
          }
        });
  }

  private void fgdWorkload(FgdWorkloadPolicy workload) {
    var window = workload.learnedWindowMinutes();
    if (window < 0 || window > FgdWorkloadPolicy.MAX_WINDOW_MINUTES) {
      add(
          "allocator.fgdWorkload.learnedWindowMinutes",
          window + " must be between 0 (pending and running pods only) and " + FgdWorkloadPolicy.MAX_WINDOW_MINUTES + " (a week)");
    }
    var seen = new java.util.HashMap<String, Integer>();
    var declared = workload.declared();
    for (int i = 0; i < declared.size(); i++) {
      var path = "allocator.fgdWorkload.declared[" + i + "]";
      var ask = declared.get(i);
      if (ask.gpuMemory().isPresent() == ask.gpus().isPresent()) {
        add(path, ask.gpuMemory().isPresent()
            ? "gives both gpuMemory and gpus: an ask is either GiB of one GPU (gpuMemory) or whole GPUs (gpus)"
            : "needs gpuMemory (GiB of one GPU) or gpus (whole GPUs)");
        continue;
      }
      if (ask.gpuMemory().isPresent() && ask.gpuMemory().get() < 1) {
        add(path + ".gpuMemory", ask.gpuMemory().get() + " must be 1 or more (GiB of one GPU)");
        continue;
      }
      if (ask.gpus().isPresent() && ask.gpus().get() < 1) {
        add(path + ".gpus", ask.gpus().get() + " must be 1 or more (whole GPUs)");
        continue;
      }
      if (!ask.cpuReadable()) {
        add(path + ".cpu", "\"" + ask.cpu().get() + "\" is not a CPU quantity (such as 4, 0.5 or 500m)");
      }
      if (!(ask.weight() > 0) || Double.isInfinite(ask.weight())) {
        add(
            path + ".weight",
            (Double.isFinite(ask.weight()) ? java.math.BigDecimal.valueOf(ask.weight()).stripTrailingZeros().toPlainString() : String.valueOf(ask.weight()))
                + " must be a positive number (how often this ask comes, relative to the others)");
      }
      var what =
          ask.gpuMemory().map(m -> m + "GiB of one GPU").orElseGet(() -> ask.gpus().get() + " whole GPU" + (ask.gpus().get() == 1 ? "" : "s"))
              + (ask.cpuReadable() && ask.cpuMilli() > 0 ? ", " + ask.cpu().get() + " CPU" : "");
      var earlier = seen.putIfAbsent(what, i);
      if (earlier != null) {
        add(path, "the same ask (" + what + ") as allocator.fgdWorkload.declared[" + earlier + "]; give each ask once, with its whole weight");
      }
    }
  }

  private void namespaces(String path, List<String> list) {
    for (int i = 0; i < list.size(); i++) {
      if (!KubernetesNames.isNamespace(list.get(i))) {
        add(path + "[" + i + "]", "\"" + list.get(i) + "\" is not a valid namespace name");
      }
    }
  }

  /** Label and annotation keys: an optional DNS-subdomain prefix, a slash, a name of 63 or less. */
  private void labelKey(String path, String key) {
    if (!KubernetesNames.isQualifiedName(key)) {
      add(path, "\"" + key + "\" is not a valid Kubernetes label key");
    }
  }

  private void resourceName(String path, String name) {
    if (!KubernetesNames.isQualifiedName(name)) {
      add(path, "\"" + name + "\" is not a valid resource name");
    }
  }

  private void labelValue(String path, String value) {
    if (!KubernetesNames.isLabelValue(value)) {
      add(path, "\"" + value + "\" is not a valid label value");
    }
  }

  private static String sorted(Set<String> values) {
    return values.stream().sorted().toList().toString();
  }

  private void add(String path, String message) {
    findings.add(new Finding(path, message));
  }
}
