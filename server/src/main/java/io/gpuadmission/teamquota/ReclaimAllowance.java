package io.gpuadmission.teamquota;

import io.gpuadmission.preemption.DisruptionBudgets;
import io.gpuadmission.preemption.PodFacts;
import io.gpuadmission.quota.DisruptionAllowance;
import io.gpuadmission.quota.RunningPod;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/** The PodDisruptionBudgets in force as the reclaim planner weighs them, for the pods it may evict. */
final class ReclaimAllowance {
  private ReclaimAllowance() {}

  /**
   * Each budget's allowed disruptions, and per running pod (by uid) the budgets its eviction takes
   * one from, as preemption reads them ({@link DisruptionBudgets#selecting}). A budget that arrives
   * between the two reads is left out, so every budget named has its count.
   */
  static DisruptionAllowance of(DisruptionBudgets budgets, List<RunningPod> running, Function<String, Optional<PodFacts>> facts) {
    var allowed = budgets.allowed();
    if (allowed.isEmpty()) {
      return DisruptionAllowance.NONE;
    }
    var byUid = new HashMap<String, List<String>>();
    for (var pod : running) {
      facts.apply(pod.pod().uid()).ifPresent(known -> {
        var selecting = budgets.selecting(known).stream().filter(allowed::containsKey).toList();
        if (!selecting.isEmpty()) {
          byUid.put(pod.pod().uid(), selecting);
        }
      });
    }
    return new DisruptionAllowance(allowed, byUid);
  }
}
