package io.gpuadmission.validation;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.gpuadmission.cluster.GpuNode;
import io.gpuadmission.pod.NodeAffinityEditor;
import io.gpuadmission.pod.NodeConstraints;
import io.gpuadmission.pod.PodSelectors;
import io.gpuadmission.policy.FeasibilityPolicy;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;

/**
 * The GPU model a pod asks by required node affinity, judged like a nodeSelector's: a pod none of
 * whose terms (ORed) can match the model label of any known GPU node can never be scheduled.
 * Only the model label's expressions are judged (In, NotIn, Exists, DoesNotExist, ANDed within a
 * term, as kube-scheduler matches them); a term that says nothing of the model leaves it open. A
 * nodeSelector on the model that every term excludes is refused too: no node can match both.
 */
final class ModelAffinityCheck {
  /** Stands for a model no term lists, for {@code scaleFromZeroModels: ["*"]}: never a label value. */
  private static final String SOME_OTHER_MODEL = FeasibilityPolicy.ANY_MODEL;

  private ModelAffinityCheck() {}

  /**
   * Refuses (or warns of) a pod whose required node affinity matches no known GPU node's model.
   * True when some term can match a known model (or none names the model) and the other checks
   * should go on; false after a refusal, or after the warning for a model a pool at zero may bring.
   */
  static boolean fits(PodSubject s, ValidationResult result, List<GpuNode> gpuNodes) {
    var label = s.policy().nodeLabels().model();
    var terms = NodeAffinityEditor.requiredTerms(s.pod()).stream().filter(Objects::nonNull).toList();
    var onModel = terms.stream().map(t -> modelExpressions(t, label)).toList();
    if (onModel.stream().allMatch(List::isEmpty)) {
      return true;
    }
    for (int i = 0; i < terms.size(); i++) {
      if (onModel.get(i).isEmpty() && !isEmpty(terms.get(i))) {
        return true; // this term leaves the model open
      }
    }
    var known = new LinkedHashSet<Optional<String>>();
    gpuNodes.forEach(n -> known.add(n.model()));
    if (known.stream().anyMatch(model -> matches(onModel, label, model))) {
      return true;
    }
    var asked = askedModels(onModel);
    var policy = s.policy().feasibility();
    var scaling = new TreeSet<String>();
    for (var candidate : candidates(policy, onModel)) {
      if (matches(onModel, label, Optional.of(candidate))) {
        scaling.add(candidate);
      }
    }
    var names = models(gpuNodes);
    if (!scaling.isEmpty()) {
      var listed = asked.map(a -> scalingNamed(a, scaling)).orElse(List.of());
      var which = asked.isPresent() ? "asks " + quoted(asked.get()) + " by required node affinity, which no node has now"
          : "asks by required node affinity (" + describe(onModel, label) + ") a GPU model no node has now";
      var lists = asked.isEmpty() ? "such a model" : asked.get().size() == 1 ? "it" : String.join(", ", listed);
      result.warn("gpu-admission: " + s.prefix() + which + "; admitted as policy feasibility.scaleFromZeroModels lists " + lists
          + " (a node pool that scales from zero): it stays Pending until the cluster autoscaler adds such a node");
      return false;
    }
    var what = asked.isPresent()
        ? "asks " + quoted(asked.get()) + " by required node affinity but no node has " + (asked.get().size() == 1 ? "it" : "any of them")
        : "asks by required node affinity (" + describe(onModel, label) + ") a GPU model no node has";
    FeasibilityRule.infeasible(
        s,
        result,
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
        s.prefix() + what + " (known models: " + String.join(", ", names)
            + "); use one of those, or, if its node pool scales from zero, list it in policy feasibility.scaleFromZeroModels");
    return false;
  }

  /**
   * Refuses (or warns of) a pod whose nodeSelector names a GPU model that every required node
   * affinity term excludes: no node can match both, whatever nodes the cluster has or may get.
   * True after such a refusal.
   */
  static boolean contradicts(PodSubject s, ValidationResult result) {
    var label = s.policy().nodeLabels().model();
    var selected = PodSelectors.nodeSelectorValue(s.pod(), label);
    var terms = NodeAffinityEditor.requiredTerms(s.pod()).stream().filter(Objects::nonNull).toList();
    if (selected.isEmpty() || terms.isEmpty()) {
      return false;
    }
    var onModel = terms.stream().map(t -> modelExpressions(t, label)).toList();
    for (int i = 0; i < terms.size(); i++) {
      if (onModel.get(i).isEmpty() && !isEmpty(terms.get(i))) {
        return false; // this term leaves the model open
      }
    }
    if (matches(onModel, label, selected)) {
      return false;
    }
    FeasibilityRule.infeasible(
        s,
        result,
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
        s.prefix() + "asks GPU model \"" + selected.get() + "\" by nodeSelector, which its required node affinity ("
            + describe(onModel, label) + ") excludes: no node can match both; make them agree or drop one");
    return true;
  }

  private static List<NodeSelectorRequirement> modelExpressions(NodeSelectorTerm term, String label) {
    var expressions = term.getMatchExpressions() == null ? List.<NodeSelectorRequirement>of() : term.getMatchExpressions();
    return expressions.stream().filter(e -> e != null && label.equals(e.getKey())).toList();
  }

  private static boolean isEmpty(NodeSelectorTerm term) {
    return (term.getMatchExpressions() == null || term.getMatchExpressions().isEmpty())
        && (term.getMatchFields() == null || term.getMatchFields().isEmpty());
  }

  /** Whether a node whose model label is {@code model} (empty: no such label) matches some term, as kube-scheduler matches it. */
  private static boolean matches(List<List<NodeSelectorRequirement>> onModel, String label, Optional<String> model) {
    var terms = onModel.stream().map(expressions -> {
      var term = new NodeSelectorTerm();
      term.setMatchExpressions(expressions);
      return term;
    }).toList();
    var node = new NodeBuilder().withNewMetadata().withName("model").withLabels(model.map(m -> Map.of(label, m)).orElse(Map.of()))
        .endMetadata().build();
    return new NodeConstraints(Map.of(), terms, List.of()).admits(node);
  }

  /**
   * The models asked when every term is one {@code In} list on the model label (the usual way to
   * name models), sorted; empty when the terms say it otherwise (NotIn, Exists, DoesNotExist, or
   * several expressions), which are then quoted as written.
   */
  private static Optional<List<String>> askedModels(List<List<NodeSelectorRequirement>> onModel) {
    var asked = new TreeSet<String>();
    for (var expressions : onModel) {
      if (expressions.size() != 1 || !"In".equals(expressions.get(0).getOperator()) || values(expressions.get(0)).isEmpty()) {
        return Optional.empty();
      }
      asked.addAll(values(expressions.get(0)));
    }
    return Optional.of(List.copyOf(asked));
  }

  /** The models a node pool at zero may bring: those listed, or, for {@code "*"}, any the terms name and one they do not. */
  private static List<String> candidates(FeasibilityPolicy policy, List<List<NodeSelectorRequirement>> onModel) {
    if (!policy.scaleFromZeroModels().contains(FeasibilityPolicy.ANY_MODEL)) {
      return policy.scaleFromZeroModels();
    }
    var named = new ArrayList<String>();
    onModel.forEach(expressions -> expressions.forEach(e -> named.addAll(values(e))));
    named.add(SOME_OTHER_MODEL);
    return named;
  }

  private static List<String> scalingNamed(List<String> asked, TreeSet<String> scaling) {
    return asked.stream().filter(scaling::contains).toList();
  }

  /** {@code aliyun.accelerator/nvidia_name NotIn [Tesla-M40, Tesla-T4]; or ... Exists}: the model expressions, term by term. */
  private static String describe(List<List<NodeSelectorRequirement>> onModel, String label) {
    var terms = new ArrayList<String>();
    for (var expressions : onModel) {
      if (expressions.isEmpty()) {
        terms.add("an empty term, which matches no node");
        continue;
      }
      var parts = expressions.stream()
          .map(e -> label + " " + e.getOperator() + (values(e).isEmpty() ? "" : " [" + String.join(", ", values(e)) + "]"))
          .toList();
      terms.add(String.join(" and ", parts));
    }
    return String.join("; or ", terms);
  }

  private static List<String> values(NodeSelectorRequirement e) {
    return e.getValues() == null ? List.of() : e.getValues().stream().filter(Objects::nonNull).toList();
  }

  /** {@code GPU model "A"}, {@code GPU models "A" or "B"}. */
  private static String quoted(List<String> models) {
    var each = models.stream().map(m -> "\"" + m + "\"").toList();
    if (each.size() == 1) {
      return "GPU model " + each.get(0);
    }
    return "GPU models " + String.join(", ", each.subList(0, each.size() - 1)) + " or " + each.get(each.size() - 1);
  }

  private static List<String> models(List<GpuNode> nodes) {
    var names = new TreeSet<String>();
    nodes.forEach(n -> n.model().ifPresent(names::add));
    return List.copyOf(names);
  }
}
