package io.gpuadmission.gang;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The nodes a pod may run on by its own spec: nodeSelector, required node affinity, taints it
 * tolerates, and cordoned nodes. The gang planner places members before kube-scheduler has
 * filtered nodes for them, so it must not plan a member onto a node the scheduler would refuse
 * for these reasons. Written by hand after kube-scheduler's NodeAffinity and TaintToleration
 * plugins (fabric8 has the types but no matcher); resources, ports of other pods and pod
 * affinity are left to kube-scheduler, and a plan it cannot follow times out and is remade.
 */
public record NodeConstraints(Map<String, String> nodeSelector, List<NodeSelectorTerm> required, List<Toleration> tolerations) {
  static final String UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable";
  /** kube-scheduler's NodeAffinity plugin's reason, for a nodeSelector and for required node affinity alike. */
  static final String AFFINITY_MISMATCH = "node(s) didn't match Pod's node affinity/selector";

  public NodeConstraints {
    nodeSelector = nodeSelector == null ? Map.of() : Map.copyOf(nodeSelector);
    required = required == null ? List.of() : required.stream().filter(Objects::nonNull).toList();
    tolerations = tolerations == null ? List.of() : tolerations.stream().filter(Objects::nonNull).toList();
  }

  public static NodeConstraints of(PodSpec spec) {
    if (spec == null) {
      return new NodeConstraints(Map.of(), List.of(), List.of());
    }
    var affinity = spec.getAffinity() == null ? null : spec.getAffinity().getNodeAffinity();
    var required = affinity == null || affinity.getRequiredDuringSchedulingIgnoredDuringExecution() == null
        ? null
        : affinity.getRequiredDuringSchedulingIgnoredDuringExecution().getNodeSelectorTerms();
    var selector = spec.getNodeSelector() == null ? null : spec.getNodeSelector();
    if (selector != null && selector.containsValue(null)) {
      selector = Map.of("", "\u0000"); // a null value matches no node, as kube-scheduler's
    }
    return new NodeConstraints(selector, required, spec.getTolerations());
  }

  /** True when the pod may run on {@code node} as far as these constraints go. */
  public boolean admits(Node node) {
    return refusal(node).isEmpty();
  }

  /**
   * Why kube-scheduler's NodeAffinity, NodeUnschedulable or TaintToleration plugin would refuse
   * {@code node}, in its words; empty when none would.
   */
  public Optional<String> refusal(Node node) {
    var labels = node.getMetadata().getLabels() == null ? Map.<String, String>of() : node.getMetadata().getLabels();
    for (var entry : nodeSelector.entrySet()) {
      if (!entry.getValue().equals(labels.get(entry.getKey()))) {
        return Optional.of(AFFINITY_MISMATCH);
      }
    }
    if (!required.isEmpty() && required.stream().noneMatch(term -> matches(term, labels, node.getMetadata().getName()))) {
      return Optional.of(AFFINITY_MISMATCH);
    }
    if (node.getSpec() != null && Boolean.TRUE.equals(node.getSpec().getUnschedulable()) && !tolerates(UNSCHEDULABLE_TAINT, null, "NoSchedule")) {
      return Optional.of("node(s) were unschedulable");
    }
    var taints = node.getSpec() == null || node.getSpec().getTaints() == null ? List.<Taint>of() : node.getSpec().getTaints();
    for (var taint : taints) {
      if (taint != null && ("NoSchedule".equals(taint.getEffect()) || "NoExecute".equals(taint.getEffect()))
          && !tolerates(taint.getKey(), taint.getValue(), taint.getEffect())) {
        return Optional.of("node(s) had untolerated taint {" + taint.getKey() + ": " + (taint.getValue() == null ? "" : taint.getValue()) + "}");
      }
    }
    return Optional.empty();
  }

  /** A term matches when all its expressions and fields do; a term with neither matches nothing. */
  private static boolean matches(NodeSelectorTerm term, Map<String, String> labels, String name) {
    var expressions = term.getMatchExpressions() == null ? List.<NodeSelectorRequirement>of() : term.getMatchExpressions();
    var fields = term.getMatchFields() == null ? List.<NodeSelectorRequirement>of() : term.getMatchFields();
    if (expressions.isEmpty() && fields.isEmpty()) {
      return false;
    }
    for (var expression : expressions) {
      if (expression == null || !matches(expression, labels.get(expression.getKey()), labels.containsKey(expression.getKey()))) {
        return false;
      }
    }
    for (var field : fields) {
      // metadata.name is the only field a node selector may name.
      if (field == null || !"metadata.name".equals(field.getKey()) || !matches(field, name, true)) {
        return false;
      }
    }
    return true;
  }

  private static boolean matches(NodeSelectorRequirement requirement, String value, boolean present) {
    var values = requirement.getValues() == null ? List.<String>of() : requirement.getValues();
    return switch (String.valueOf(requirement.getOperator())) {
      case "In" -> present && values.contains(value);
      case "NotIn" -> !present || !values.contains(value);
      case "Exists" -> present;
      case "DoesNotExist" -> !present;
      case "Gt" -> present && values.size() == 1 && compare(value, values.get(0)) > 0;
      case "Lt" -> present && values.size() == 1 && compare(value, values.get(0)) < 0;
      default -> false;
    };
  }

  /** Gt and Lt compare integers; a label that is no integer matches neither. */
  private static int compare(String label, String bound) {
    try {
      return Long.compare(Long.parseLong(label), Long.parseLong(bound));
    } catch (NumberFormatException notANumber) {
      return 0;
    }
  }

  private boolean tolerates(String key, String value, String effect) {
    for (var toleration : tolerations) {
      var effectMatches = toleration.getEffect() == null || toleration.getEffect().isEmpty() || toleration.getEffect().equals(effect);
      var keyMatches = toleration.getKey() == null || toleration.getKey().isEmpty()
          ? "Exists".equals(toleration.getOperator())
          : toleration.getKey().equals(key);
      var valueMatches = "Exists".equals(toleration.getOperator())
          || Objects.equals(emptyIfNull(toleration.getValue()), emptyIfNull(value));
      if (effectMatches && keyMatches && valueMatches) {
        return true;
      }
    }
    return false;
  }

  private static String emptyIfNull(String s) {
    return s == null ? "" : s;
  }
}
