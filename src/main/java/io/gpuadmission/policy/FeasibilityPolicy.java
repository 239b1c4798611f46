package io.gpuadmission.policy;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * What the validating webhook does with a GPU pod that no known GPU node can take: more whole GPUs
 * or GPU memory than the largest node or GPU of its pool has, or a GPU model or placement no node
 * of its pool carries. Refused with the fix by default; {@code warn} admits it with the same words
 * as a warning, for clusters whose nodes come and go (an autoscaled pool may bring the node).
 */
public record FeasibilityPolicy(OnInfeasible onInfeasible) {

  /** Refuse the pod or workload, or admit it with a warning. */
  public enum OnInfeasible {
    @JsonProperty("refuse")
    REFUSE,
    @JsonProperty("warn")
    WARN
  }
}
