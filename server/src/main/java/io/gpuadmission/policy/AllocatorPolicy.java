package io.gpuadmission.policy;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Map;

/**
 * Allocator strategy names, per-model link matrices as {@code nvidia-smi topo -m} text, and the
 * workload FGD measures against.
 */
public record AllocatorPolicy(
    WholeGpuStrategy wholeGpu,
    MemoryShareStrategy memoryShare,
    Map<String, String> topologies,
    FgdWorkloadPolicy fgdWorkload) {

  public AllocatorPolicy {
    topologies = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(topologies));
  }

  /** How whole GPUs of one node are chosen. */
  public enum WholeGpuStrategy {
    @JsonProperty("topology")
    TOPOLOGY,
    @JsonProperty("first-fit")
    FIRST_FIT
  }

  /** How a GPU-memory share is placed. */
  public enum MemoryShareStrategy {
    @JsonProperty("binpack")
    BINPACK,
    @JsonProperty("spread")
    SPREAD,
    @JsonProperty("fgd")
    FGD,
    /** FGD plus the GPU a node's CPU strands (allocator's {@code FgdPolicy}, CPU-aware). */
    @JsonProperty("fgd-cpu")
    FGD_CPU,
    /** {@code fgd-cpu} plus a lookahead over the remainder a share leaves (allocator's {@code FgdPolicy}, lookahead). */
    @JsonProperty("fgd-lookahead")
    FGD_LOOKAHEAD
  }
}
