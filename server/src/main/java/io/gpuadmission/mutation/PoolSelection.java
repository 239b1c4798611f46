package io.gpuadmission.mutation;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.pod.PodSelectors;

/**
 * Sends a pod to a GPU pool ({@code ack.node.gpu.schedule}) unless it already chose one: the
 * user's explicit choice wins, with a warning when it differs from the policy's.
 */
final class PoolSelection {
  private PoolSelection() {}

  /** Returns true when the pool selector was added. */
  static boolean select(Pod pod, String poolLabel, String pool, String why, MutationReport report) {
    var chosen = PodSelectors.nodeSelectorValue(pod, poolLabel);
    if (chosen.isPresent()) {
      if (!chosen.get().equals(pool)) {
        report.note(
            "kept nodeSelector " + poolLabel + "=" + chosen.get() + " although " + why + " would use " + pool);
      }
      return false;
    }
    if (PodSelectors.selectsByLabel(pod, poolLabel)) {
      report.note("kept the pod's own node affinity on " + poolLabel + "; " + why + " would use " + pool);
      return false;
    }
    PodSelectors.putNodeSelector(pod, poolLabel, pool);
    return true;
  }
}
