package io.gpuadmission.policy;

import java.util.Map;

/**
 * How a whole-GPU pod is pinned to a GPU model: by its own annotation, by its namespace's default,
 * or by a minimum GPU memory turned into the list of models that have it.
 */
public record GpuModelPolicy(
    String modelAnnotation,
    String minMemoryAnnotation,
    int memoryTolerancePercent,
    Map<String, String> namespaceDefaults) {

  public GpuModelPolicy {
    namespaceDefaults = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(namespaceDefaults));
  }
}
