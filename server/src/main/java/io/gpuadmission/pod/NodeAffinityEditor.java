package io.gpuadmission.pod;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.NodeAffinity;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * Reads and edits a pod's required node affinity. Required terms are ORed and the expressions of
 * one term are ANDed, so a constraint that must always hold goes into every term.
 */
public final class NodeAffinityEditor {
  private NodeAffinityEditor() {}

  /** The required node selector terms; empty when the pod has none. */
  public static List<NodeSelectorTerm> requiredTerms(Pod pod) {
    var spec = pod.getSpec();
    if (spec == null || spec.getAffinity() == null || spec.getAffinity().getNodeAffinity() == null) {
      return List.of();
    }
    var required =
        spec.getAffinity().getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution();
    return required == null || required.getNodeSelectorTerms() == null
        ? List.of()
        : required.getNodeSelectorTerms();
  }

  /** True when some expression of some required term matches. */
  public static boolean anyRequiredExpression(Pod pod, Predicate<NodeSelectorRequirement> test) {
    for (var term : requiredTerms(pod)) {
      if (term.getMatchExpressions() != null && term.getMatchExpressions().stream().anyMatch(test)) {
        return true;
      }
    }
    return false;
  }

  /**
   * ANDs {@code requirement} into every required term that lacks it, or adds one required term
   * holding it when the pod has none. An empty term matches no node: it is left empty, since
   * adding the requirement would widen it to every node that meets the requirement. Returns
   * whether the pod changed.
   */
  public static boolean requireEverywhere(Pod pod, NodeSelectorRequirement requirement) {
    var terms = requiredTerms(pod);
    if (terms.isEmpty()) {
      var term = new NodeSelectorTerm();
      term.setMatchExpressions(new ArrayList<>(List.of(requirement)));
      requiredSelector(pod).setNodeSelectorTerms(new ArrayList<>(List.of(term)));
      return true;
    }
    var changed = false;
    for (var term : terms) {
      if (isEmpty(term)) {
        continue;
      }
      var expressions = term.getMatchExpressions();
      if (expressions == null) {
        expressions = new ArrayList<>();
        term.setMatchExpressions(expressions);
      }
      if (expressions.stream().noneMatch(e -> same(e, requirement))) {
        expressions.add(requirement);
        changed = true;
      }
    }
    return changed;
  }

  private static boolean isEmpty(NodeSelectorTerm term) {
    return (term.getMatchExpressions() == null || term.getMatchExpressions().isEmpty())
        && (term.getMatchFields() == null || term.getMatchFields().isEmpty());
  }

  public static NodeSelectorRequirement requirement(String key, String operator, List<String> values) {
    var requirement = new NodeSelectorRequirement();
    requirement.setKey(key);
    requirement.setOperator(operator);
    requirement.setValues(new ArrayList<>(values));
    return requirement;
  }

  private static boolean same(NodeSelectorRequirement a, NodeSelectorRequirement b) {
    return Objects.equals(a.getKey(), b.getKey())
        && Objects.equals(a.getOperator(), b.getOperator())
        && Objects.equals(emptyIfNull(a.getValues()), emptyIfNull(b.getValues()));
  }

  private static List<String> emptyIfNull(List<String> values) {
    return values == null ? List.of() : values;
  }

  private static NodeSelector requiredSelector(Pod pod) {
    var spec = pod.getSpec();
    if (spec.getAffinity() == null) {
      spec.setAffinity(new Affinity());
    }
    var affinity = spec.getAffinity();
    if (affinity.getNodeAffinity() == null) {
      affinity.setNodeAffinity(new NodeAffinity());
    }
    var nodeAffinity = affinity.getNodeAffinity();
    if (nodeAffinity.getRequiredDuringSchedulingIgnoredDuringExecution() == null) {
      nodeAffinity.setRequiredDuringSchedulingIgnoredDuringExecution(new NodeSelector());
    }
    return nodeAffinity.getRequiredDuringSchedulingIgnoredDuringExecution();
  }
}
