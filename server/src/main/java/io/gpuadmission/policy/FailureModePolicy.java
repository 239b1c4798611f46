package io.gpuadmission.policy;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * What the webhook answers when it cannot judge a pod: GPU pods fail closed by default (a wrong
 * placement wastes GPUs silently), other pods fail open (an outage must not stop the cluster).
 */
public record FailureModePolicy(FailureMode gpuPods, FailureMode otherPods) {

  public FailureMode forPod(boolean asksForGpu) {
    return asksForGpu ? gpuPods : otherPods;
  }

  /** Open answers {@code allowed: true} with a warning; closed refuses with the reason. */
  public enum FailureMode {
    @JsonProperty("open")
    OPEN,
    @JsonProperty("closed")
    CLOSED
  }
}
