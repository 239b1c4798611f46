package io.gpuadmission.quota;

import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The PodDisruptionBudgets reclaim weighs, as kube-scheduler's preemption does: a preference, never
 * a veto. Each budget (any name, e.g. {@code namespace/name}) allows some disruptions now; a pod's
 * eviction takes one from every budget that counts it. Which budgets select a pod (and do not count
 * it disrupted already) is the caller's to say: quota sees no labels.
 */
public final class DisruptionAllowance {
  /** No budgets: every victim set violates none. */
  public static final DisruptionAllowance NONE = new DisruptionAllowance(Map.of(), Map.of());

  /** kube-scheduler's {@code MoreImportantPod}: higher priority, then started earlier; then the uid. */
  private static final Comparator<RunningPod> MORE_IMPORTANT_FIRST =
      Comparator.comparingInt((RunningPod running) -> running.pod().priority()).reversed()
          .thenComparingLong(running -> running.pod().startedAtMillis())
          .thenComparing(running -> running.pod().uid());

  private final Map<String, Integer> allowed;
  private final Map<String, List<String>> budgetsByUid;

  /**
   * @param allowed each budget's disruptions allowed now
   * @param budgetsByUid per pod uid, the budgets its eviction takes a disruption from; each must be in {@code allowed}
   */
  public DisruptionAllowance(Map<String, Integer> allowed, Map<String, ? extends Collection<String>> budgetsByUid) {
    this.allowed = Map.copyOf(allowed);
    var copy = new HashMap<String, List<String>>();
    budgetsByUid.forEach((uid, budgets) -> {
      for (var budget : budgets) {
        if (!this.allowed.containsKey(budget)) {
          throw new IllegalArgumentException("pod " + uid + " is counted by budget " + budget + ", which allows no known number of disruptions");
        }
      }
      if (!budgets.isEmpty()) {
        copy.put(uid, List.copyOf(budgets));
      }
    });
    this.budgetsByUid = Map.copyOf(copy);
  }

  /** Each budget and the disruptions it allows now. */
  public Map<String, Integer> allowed() {
    return allowed;
  }

  /** The budgets the eviction of the pod of this uid takes a disruption from; empty when none. */
  public List<String> budgetsOf(String uid) {
    return budgetsByUid.getOrDefault(uid, List.of());
  }

  /** Whether any budget counts one of these pods: when none does, every set of them violates none. */
  boolean countsAny(Collection<RunningPod> pods) {
    return !budgetsByUid.isEmpty() && pods.stream().anyMatch(pod -> budgetsByUid.containsKey(pod.pod().uid()));
  }

  /**
   * kube-scheduler's {@code filterPodsWithPDBViolation}: the victims, most important first, each take
   * one disruption from every budget that counts them; how many of them take one a budget no longer
   * has (it goes below zero) violate it.
   */
  int violations(Collection<RunningPod> victims) {
    if (!countsAny(victims)) {
      return 0;
    }
    var left = new HashMap<>(allowed);
    var violating = 0;
    for (var victim : victims.stream().sorted(MORE_IMPORTANT_FIRST).toList()) {
      var violates = false;
      for (var budget : budgetsOf(victim.pod().uid())) {
        if (left.merge(budget, -1, Integer::sum) < 0) {
          violates = true;
        }
      }
      violating += violates ? 1 : 0;
    }
    return violating;
  }
}
