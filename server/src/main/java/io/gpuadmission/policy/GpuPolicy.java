package io.gpuadmission.policy;

import java.util.List;

/**
 * One immutable snapshot of everything the webhook decides by: read once per request, swapped
 * whole when the policy ConfigMap changes. {@code policy.yaml} in {@code src/main/resources} is the
 * built-in default and the reference for every key.
 */
public record GpuPolicy(
    int version,
    List<String> exemptNamespaces,
    String optOutLabel,
    List<String> gpuResources,
    NodeLabels nodeLabels,
    CpuPodPolicy cpuPods,
    TopologyPolicy topology,
    SharedMemoryPolicy sharedMemory,
    GpuModelPolicy gpuModel,
    AllocatorPolicy allocator,
    FailureModePolicy failureMode,
    SchedulingPolicy scheduling,
    FeasibilityPolicy feasibility,
    QuotaPolicy quotas) {

  public static final int CURRENT_VERSION = 1;

  public GpuPolicy {
    exemptNamespaces = List.copyOf(exemptNamespaces);
    gpuResources = List.copyOf(gpuResources);
  }

  public boolean isExempt(String namespace) {
    return namespace != null && exemptNamespaces.contains(namespace);
  }

  /** True when {@code resourceName} is a GPU resource; a trailing {@code *} matches a prefix. */
  public boolean isGpuResource(String resourceName) {
    for (var pattern : gpuResources) {
      if (pattern.endsWith("*")
          ? resourceName.startsWith(pattern.substring(0, pattern.length() - 1))
          : resourceName.equals(pattern)) {
        return true;
      }
    }
    return false;
  }
}
