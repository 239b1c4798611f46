package io.gpuadmission.pod;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** What a pod selects by node label, through its nodeSelector or its required node affinity. */
public final class PodSelectors {
  /** Operators that point a pod towards nodes carrying the label, not away from them. */
  private static final Set<String> ATTRACTING = Set.of("In", "Exists", "Gt", "Lt");

  private PodSelectors() {}

  public static Optional<String> nodeSelectorValue(Pod pod, String key) {
    var selector = pod.getSpec().getNodeSelector();
    return selector == null ? Optional.empty() : Optional.ofNullable(selector.get(key));
  }

  /** True when the nodeSelector or a required affinity expression selects nodes by {@code key}. */
  public static boolean selectsByLabel(Pod pod, String key) {
    return nodeSelectorValue(pod, key).isPresent()
        || NodeAffinityEditor.anyRequiredExpression(
            pod, e -> key.equals(e.getKey()) && ATTRACTING.contains(e.getOperator()));
  }

  /**
   * The values of label {@code key} a node must have for the pod: the nodeSelector's value, else the
   * values the required node affinity allows (each term's {@code In} lists, intersected within a
   * term, united over the terms, which are ORed). Empty when some term (or the pod, without terms)
   * leaves the label open.
   */
  public static Optional<Set<String>> selectedValues(Pod pod, String key) {
    var chosen = nodeSelectorValue(pod, key);
    if (chosen.isPresent()) {
      return Optional.of(Set.of(chosen.get()));
    }
    var terms = NodeAffinityEditor.requiredTerms(pod);
    if (terms.isEmpty()) {
      return Optional.empty();
    }
    var union = new java.util.TreeSet<String>();
    for (var term : terms) {
      java.util.Set<String> allowed = null;
      for (var e : term == null || term.getMatchExpressions() == null ? List.<io.fabric8.kubernetes.api.model.NodeSelectorRequirement>of() : term.getMatchExpressions()) {
        if (e != null && key.equals(e.getKey()) && "In".equals(e.getOperator()) && e.getValues() != null) {
          var values = new java.util.TreeSet<>(e.getValues());
          if (allowed == null) {
            allowed = values;
          } else {
            allowed.retainAll(values);
          }
        }
      }
      if (allowed == null) {
        return Optional.empty();
      }
      union.addAll(allowed);
    }
    return Optional.of(union);
  }

  /** True when any label the nodeSelector or required affinity is drawn to matches. */
  public static boolean selectsByAnyLabel(Pod pod, java.util.function.Predicate<String> key) {
    var selector = pod.getSpec().getNodeSelector();
    if (selector != null && selector.keySet().stream().anyMatch(key)) {
      return true;
    }
    return NodeAffinityEditor.anyRequiredExpression(
        pod, e -> e.getKey() != null && key.test(e.getKey()) && ATTRACTING.contains(e.getOperator()));
  }

  /** True for an expression that draws a pod towards nodes carrying its label (In, Exists, Gt, Lt). */
  public static boolean attracts(io.fabric8.kubernetes.api.model.NodeSelectorRequirement expression) {
    return ATTRACTING.contains(expression.getOperator());
  }

  /** Adds {@code key=value} to the nodeSelector, keeping the user's entries first. */
  public static void putNodeSelector(Pod pod, String key, String value) {
    var spec = pod.getSpec();
    var selector = spec.getNodeSelector() == null ? new LinkedHashMap<String, String>() : new LinkedHashMap<>(spec.getNodeSelector());
    selector.put(key, value);
    spec.setNodeSelector(selector);
  }
}
