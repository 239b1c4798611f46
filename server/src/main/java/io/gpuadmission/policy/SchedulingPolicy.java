package io.gpuadmission.policy;

import java.util.Optional;

/**
 * Which scheduler places GPU pods. Empty leaves the pod's {@code schedulerName} alone (the
 * cluster's default scheduler, which may run this service as its extender); a name sends GPU pods
 * to a second scheduler that does, such as the one {@code manifests/scheduler/} installs.
 */
public record SchedulingPolicy(String schedulerName) {

  /** The scheduler GPU pods are given, if the policy names one. */
  public Optional<String> gpuScheduler() {
    return schedulerName.isEmpty() ? Optional.empty() : Optional.of(schedulerName);
  }
}
