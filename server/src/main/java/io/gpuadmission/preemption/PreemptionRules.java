package io.gpuadmission.preemption;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.placement.GpuLedger;

/** kube-scheduler's {@code PodEligibleToPreemptOthers}, on what the extender knows. */
final class PreemptionRules {
  private PreemptionRules() {}

  /** {@code preemptionPolicy: Never}: the pod waits for room and never evicts anyone. */
  static boolean neverPreempts(Pod pod) {
    return pod.getSpec() != null && "Never".equals(pod.getSpec().getPreemptionPolicy());
  }

  /**
   * The pod is nominated to a node where pods of lower priority are terminating by a scheduler's
   * preemption: its earlier preemption is still under way, so no more victims for it yet.
   */
  static boolean victimsTerminating(Pod pod, PodFactsIndex pods, GpuLedger ledger) {
    var nominated = pod.getStatus() == null ? null : pod.getStatus().getNominatedNodeName();
    if (nominated == null || nominated.isEmpty()) {
      return false;
    }
    var priority = PodFacts.priority(pod);
    for (var claim : ledger.claimsOn(nominated)) {
      var facts = pods.facts(claim.podUid());
      if (facts.isPresent() && facts.get().priority() < priority && facts.get().preemptedByScheduler()) {
        return true;
      }
    }
    return false;
  }
}
