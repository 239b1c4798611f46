package io.gpuadmission.preemption;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The PodDisruptionBudgets, as kube-scheduler's preemption weighs them: never a veto, a preference.
 * Its {@code filterPodsWithPDBViolation} walks the potential victims most important first and takes
 * one disruption from every budget that selects each pod; a pod for which some budget goes below
 * zero violates it. Such pods are put back first, and candidates with fewer violations win.
 */
public final class DisruptionBudgets {
  /** One budget: its namespace, selector, the disruptions it allows now and the pods it already counts as disrupted. */
  record Budget(String namespace, LabelSelector selector, int allowed, Set<String> disrupted) {}

  private final Map<String, Budget> budgets = new ConcurrentHashMap<>();

  public void current(PodDisruptionBudget pdb) {
    var meta = pdb.getMetadata();
    var status = pdb.getStatus();
    budgets.put(
        meta.getNamespace() + "/" + meta.getName(),
        new Budget(
            meta.getNamespace(),
            pdb.getSpec() == null ? null : pdb.getSpec().getSelector(),
            status == null || status.getDisruptionsAllowed() == null ? 0 : status.getDisruptionsAllowed(),
            status == null || status.getDisruptedPods() == null ? Set.of() : Set.copyOf(status.getDisruptedPods().keySet())));
  }

  public void gone(PodDisruptionBudget pdb) {
    budgets.remove(pdb.getMetadata().getNamespace() + "/" + pdb.getMetadata().getName());
  }

  /** Each budget ({@code namespace/name}) and the disruptions it allows now. */
  public Map<String, Integer> allowed() {
    var out = new TreeMap<String, Integer>();
    budgets.forEach((key, budget) -> out.put(key, budget.allowed()));
    return out;
  }

  /**
   * The budgets ({@code namespace/name}) the pod's eviction takes a disruption from: those of its
   * namespace that select it and do not count it disrupted already.
   */
  public List<String> selecting(PodFacts pod) {
    var out = new TreeSet<String>();
    budgets.forEach((key, budget) -> {
      if (counts(budget, pod)) {
        out.add(key);
      }
    });
    return List.copyOf(out);
  }

  /** For pods ordered most important first: which of them would violate a budget if all were evicted. */
  boolean[] violating(List<PodFacts> ordered) {
    var out = new boolean[ordered.size()];
    if (budgets.isEmpty()) {
      return out;
    }
    var list = List.copyOf(budgets.values());
    var allowed = new int[list.size()];
    for (int b = 0; b < list.size(); b++) {
      allowed[b] = list.get(b).allowed();
    }
    for (int p = 0; p < ordered.size(); p++) {
      var pod = ordered.get(p);
      for (int b = 0; b < list.size(); b++) {
        if (!counts(list.get(b), pod)) {
          continue;
        }
        allowed[b]--;
        if (allowed[b] < 0) {
          out[p] = true;
        }
      }
    }
    return out;
  }

  /** Whether evicting the pod takes a disruption from the budget; a pod without labels matches none. */
  private static boolean counts(Budget budget, PodFacts pod) {
    return !pod.labels().isEmpty() && budget.namespace().equals(pod.namespace()) && selects(budget.selector(), pod.labels())
        && !budget.disrupted().contains(pod.name());
  }

  /**
   * kube-scheduler's test: a missing selector selects nothing, and so (unlike the PDB controller)
   * does an empty one; a requirement it cannot read selects nothing either.
   */
  static boolean selects(LabelSelector selector, Map<String, String> labels) {
    if (selector == null) {
      return false;
    }
    var matchLabels = selector.getMatchLabels() == null ? Map.<String, String>of() : selector.getMatchLabels();
    var expressions = selector.getMatchExpressions() == null ? List.<LabelSelectorRequirement>of() : selector.getMatchExpressions();
    if (matchLabels.isEmpty() && expressions.isEmpty()) {
      return false;
    }
    for (var entry : matchLabels.entrySet()) {
      if (!entry.getValue().equals(labels.get(entry.getKey()))) {
        return false;
      }
    }
    for (var requirement : expressions) {
      if (requirement == null || !holds(requirement, labels)) {
        return false;
      }
    }
    return true;
  }

  private static boolean holds(LabelSelectorRequirement requirement, Map<String, String> labels) {
    var value = labels.get(requirement.getKey());
    var values = requirement.getValues() == null ? List.<String>of() : requirement.getValues();
    return switch (String.valueOf(requirement.getOperator())) {
      case "In" -> value != null && values.contains(value);
      case "NotIn" -> value == null || !values.contains(value);
      case "Exists" -> labels.containsKey(requirement.getKey());
      case "DoesNotExist" -> !labels.containsKey(requirement.getKey());
      default -> false;
    };
  }
}
