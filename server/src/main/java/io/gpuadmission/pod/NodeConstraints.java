package io.gpuadmission.pod;

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
 * filtered nodes for them, and the extender's filter and bind re-check what kube-scheduler
 * already checked (a direct call to bind has had no filter), so none of them may say yes where
 * the scheduler would refuse for these reasons. Written by hand after kube-scheduler's
 * NodeAffinity and TaintToleration plugins (fabric8 has the types but no matcher); resources,
 * ports of other pods and pod affinity are left to kube-scheduler.
 */
public record NodeConstraints(Map<String, String> nodeSelector, List<NodeSelectorTerm> required, List<Toleration> tolerations) {
  static final String UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable";
  /** Stands for a nodeSelector value that is null: no label has it. */
  private static final String NO_VALUE = "\u0000";

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
    // Not containsValue(null): the informers' stripped pods hold immutable maps, which throw on it.
    if (selector != null && selector.values().stream().anyMatch(Objects::isNull)) {
      selector = Map.of("", NO_VALUE); // a null value matches no node, as kube-scheduler's
    }
    return new NodeConstraints(selector, required, spec.getTolerations());
  }

  /** True when the pod may run on {@code node} as far as these constraints go. */
  public boolean admits(Node node) {
    return refusal(node).isEmpty();
  }

  /**
   * Why the pod may not run on {@code node}, in words that follow "node NAME: " ({@code its label
   * ack.node.gpu.schedule is "share", the pod's nodeSelector asks "cgpu"}); empty when it may.
   */
  public Optional<String> refusal(Node node) {
    var labels = node.getMetadata().getLabels() == null ? Map.<String, String>of() : node.getMetadata().getLabels();
    for (var entry : nodeSelector.entrySet()) {
      var value = labels.get(entry.getKey());
      if (!entry.getValue().equals(value)) {
        if (entry.getValue().equals(NO_VALUE)) {
          return Optional.of("the pod's nodeSelector has a key without a value, which no node matches");
        }
        return Optional.of(
            (value == null ? "it has no label " + entry.getKey() : "its label " + entry.getKey() + " is \"" + value + "\"")
                + ", the pod's nodeSelector asks \"" + entry.getValue() + "\"");
      }
    }
    if (!required.isEmpty() && required.stream().noneMatch(term -> matches(term, labels, node.getMetadata().getName()))) {
      return Optional.of("it matches no term of the pod's required node affinity");
    }
    if (node.getSpec() != null && Boolean.TRUE.equals(node.getSpec().getUnschedulable()) && !tolerates(UNSCHEDULABLE_TAINT, null, "NoSchedule")) {
      return Optional.of("it is cordoned (unschedulable)");
    }
    var taints = node.getSpec() == null || node.getSpec().getTaints() == null ? List.<Taint>of() : node.getSpec().getTaints();
    for (int t = 0; t < taints.size(); t++) { // indexed: filter runs this for every node of a request
      var taint = taints.get(t);
      if (taint != null && ("NoSchedule".equals(taint.getEffect()) || "NoExecute".equals(taint.getEffect()))
          && !tolerates(taint.getKey(), taint.getValue(), taint.getEffect())) {
        var value = taint.getValue() == null || taint.getValue().isEmpty() ? "" : "=" + taint.getValue();
        return Optional.of("it has taint " + taint.getKey() + value + ":" + taint.getEffect() + ", which the pod does not tolerate");
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
    for (int t = 0; t < tolerations.size(); t++) {
      var toleration = tolerations.get(t);
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
