package io.gpuadmission.policy;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * What the validating webhook does with a GPU pod that no known GPU node can take: more whole GPUs
 * or GPU memory than the largest node or GPU of its pool has, or a GPU model or placement no node
 * of its pool carries. Refused with the fix by default; {@code warn} admits it with the same words
 * as a warning, for clusters whose nodes come and go (an autoscaled pool may bring the node).
 * {@code scaleFromZeroModels}: GPU models (values of the model label, {@code "*"} for any) whose
 * node pools scale from zero, so that no node of them now is no reason to refuse a pod selecting
 * one: it is admitted with a warning and waits for the cluster autoscaler.
 */
public record FeasibilityPolicy(OnInfeasible onInfeasible, List<String> scaleFromZeroModels) {
  /** In {@code scaleFromZeroModels}: every model. */
  public static final String ANY_MODEL = "*";

  public FeasibilityPolicy {
    scaleFromZeroModels = List.copyOf(scaleFromZeroModels);
  }

  /** True when {@code model}'s node pool may scale from zero (listed, or {@code "*"} listed). */
  public boolean scalesFromZero(String model) {
    return scaleFromZeroModels.contains(ANY_MODEL) || scaleFromZeroModels.contains(model);
  }

  /** Refuse the pod or workload, or admit it with a warning. */
  public enum OnInfeasible {
    @JsonProperty("refuse")
    REFUSE,
    @JsonProperty("warn")
    WARN
  }
}
