package io.gpuadmission.mutation;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.cluster.GpuModelCatalog;
import io.gpuadmission.pod.NodeAffinityEditor;
import io.gpuadmission.pod.PodResources;
import io.gpuadmission.pod.PodSelectors;
import io.gpuadmission.policy.KubernetesNames;
import java.util.List;
import java.util.OptionalLong;
import java.util.TreeSet;

/**
 * Pins a whole-GPU pod to a GPU model: the model it names in an annotation, else its namespace's
 * default; or, when it names a minimum GPU memory, to the models that have that much. The pod's
 * minimum is more specific than a namespace default: a default with less memory is not used. A
 * minimum beside a pinned model is checked against it, in a warning. The model
 * label holds text such as {@code 12209MiB}, which {@code Gt} cannot compare, so the minimum
 * becomes an {@code In} list of models read from the node inventory.
 */
public final class GpuModelRule implements PodMutationRule {
  public static final String NAME = "gpu-model";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void apply(Pod pod, MutationContext context, MutationReport report) {
    var policy = context.policy();
    var wholeGpu = policy.topology();
    if (!PodResources.asksFor(pod, r -> r.equals(wholeGpu.wholeGpuResource()) || r.equals(wholeGpu.resourceName()))) {
      return;
    }
    var modelLabel = policy.nodeLabels().model();
    var asked = annotation(pod, policy.gpuModel().modelAnnotation());
    var minimum = annotation(pod, policy.gpuModel().minMemoryAnnotation());
    var namespaceDefault = policy.gpuModel().namespaceDefaults().get(context.namespace());
    var selectsModel = PodSelectors.selectsByLabel(pod, modelLabel);
    // The pod's own minimum is more specific than its namespace's default: a default known to
    // have less memory gives way to the models that have the minimum.
    if (asked == null && namespaceDefault != null && minimum != null) {
      var memory = lackingMemory(normalise(namespaceDefault), minimum, context);
      if (memory.isPresent()) {
        if (!selectsModel) {
          report.note("namespace " + context.namespace() + "'s default GPU model " + normalise(namespaceDefault) + " has "
              + memory.getAsLong() + "MiB per GPU, less than the pod's min-gpu-memory " + minimum
              + "; the models that have the minimum are selected instead");
        }
        namespaceDefault = null;
      }
    }
    var model = asked != null ? asked : namespaceDefault;
    if (selectsModel) {
      if (model != null) {
        keptUsersChoice(pod, modelLabel, model, asked != null ? "the pod asks for GPU model " + asked
            : "namespace " + context.namespace() + "'s default GPU model is " + model, report);
      }
      if (minimum != null && PodSelectors.nodeSelectorValue(pod, modelLabel).isEmpty()) {
        minimumWithinOwnAffinity(pod, context, modelLabel, minimum, report);
      }
      return;
    }
    if (model != null && pin(pod, modelLabel, model, asked != null ? "asked by annotation" : "namespace default", report)) {
      if (minimum != null) {
        minimumAgainstPinned(normalise(model), minimum, context, report);
      }
      return;
    }
    if (minimum != null) {
      restrictByMemory(pod, context, modelLabel, minimum, report);
    }
  }

  private static String annotation(Pod pod, String key) {
    var annotations = pod.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(key);
  }

  /** {@code model}'s memory per GPU when it is known and less than {@code minimum}; else empty. */
  private static OptionalLong lackingMemory(String model, String minimum, MutationContext context) {
    var minimumMiB = GpuModelCatalog.minimumMiB(minimum);
    var memory = context.models().memoryMiB(model);
    if (minimumMiB.isEmpty() || memory.isEmpty()
        || GpuModelCatalog.atLeast(memory.getAsLong(), minimumMiB.getAsLong(), context.policy().gpuModel().memoryTolerancePercent())) {
      return OptionalLong.empty();
    }
    return memory;
  }

  /**
   * The pod was pinned to a model and also names a minimum: says whether the model meets it, or
   * why that could not be told. A model the pod itself names that lacks its minimum is a
   * contradiction the user must resolve (feasibility refuses it at {@code /validate}); a namespace
   * default that lacks it never gets here (see {@link #apply}).
   */
  private static void minimumAgainstPinned(String model, String minimum, MutationContext context, MutationReport report) {
    var minimumMiB = GpuModelCatalog.minimumMiB(minimum);
    if (minimumMiB.isEmpty()) {
      report.note("min-gpu-memory \"" + minimum + "\" is not a quantity such as 16Gi; ignored");
      return;
    }
    var memory = context.models().memoryMiB(model);
    if (memory.isEmpty()) {
      report.note(context.models().isEmpty()
          ? "no GPU nodes known yet; min-gpu-memory " + minimum + " not checked against GPU model " + model
          : "no node has GPU model " + model + " now; min-gpu-memory " + minimum + " not checked against it");
      return;
    }
    var tolerance = context.policy().gpuModel().memoryTolerancePercent();
    if (GpuModelCatalog.atLeast(memory.getAsLong(), minimumMiB.getAsLong(), tolerance)) {
      report.note("min-gpu-memory " + minimum + " is met by GPU model " + model + " (" + memory.getAsLong() + "MiB per GPU)");
      return;
    }
    var enough = context.models().modelsWithAtLeast(minimumMiB.getAsLong(), tolerance);
    report.note("GPU model " + model + ", which the pod names, has " + memory.getAsLong() + "MiB per GPU, less than its min-gpu-memory "
        + minimum + "; " + (enough.isEmpty() ? "no GPU model in the cluster has that much: lower the minimum"
            : "name a model that has it (" + String.join(", ", enough) + ") or lower the minimum"));
  }

  /**
   * The pod chose models itself (nodeSelector or required affinity on the model label) and keeps
   * its choice: a warning when it is not exactly the model the policy would pin.
   */
  private static void keptUsersChoice(Pod pod, String modelLabel, String model, String why, MutationReport report) {
    var value = normalise(model);
    var chosen = PodSelectors.nodeSelectorValue(pod, modelLabel);
    if (chosen.isPresent()) {
      if (!chosen.get().equals(value)) {
        report.note("kept nodeSelector " + modelLabel + "=" + chosen.get() + " although " + why);
      }
      return;
    }
    var onlyThatModel = NodeAffinityEditor.requiredTerms(pod).stream().allMatch(term -> term != null && term.getMatchExpressions() != null
        && term.getMatchExpressions().stream().anyMatch(e -> e != null && modelLabel.equals(e.getKey()) && "In".equals(e.getOperator())
            && List.of(value).equals(e.getValues())));
    if (!onlyThatModel) {
      report.note("kept the pod's own node affinity on " + modelLabel + " although " + why);
    }
  }

  /** Pins the pod to {@code model} by nodeSelector; false (with a note) when it is no label value. */
  private static boolean pin(Pod pod, String modelLabel, String model, String why, MutationReport report) {
    var value = normalise(model);
    if (value.isEmpty() || !KubernetesNames.isLabelValue(value)) {
      report.note("GPU model \"" + model + "\" is not a valid label value; the pod was not pinned to a model");
      return false;
    }
    PodSelectors.putNodeSelector(pod, modelLabel, value);
    report.changed(NAME, "nodeSelector " + modelLabel + "=" + value + " (" + why + ")");
    return true;
  }

  private static void restrictByMemory(
      Pod pod, MutationContext context, String modelLabel, String minimum, MutationReport report) {
    var parsed = GpuModelCatalog.minimumMiB(minimum);
    if (parsed.isEmpty()) {
      report.note("min-gpu-memory \"" + minimum + "\" is not a quantity such as 16Gi; ignored");
      return;
    }
    var minimumMiB = parsed.getAsLong();
    var models = context.models().modelsWithAtLeast(minimumMiB, context.policy().gpuModel().memoryTolerancePercent());
    if (models.isEmpty()) {
      report.note(
          context.models().isEmpty()
              ? "no GPU nodes known yet; min-gpu-memory " + minimum + " not applied"
              : "no GPU model in the cluster has " + minimum + " per GPU; min-gpu-memory not applied");
      return;
    }
    NodeAffinityEditor.requireEverywhere(pod, NodeAffinityEditor.requirement(modelLabel, "In", models));
    report.changed(NAME, "node affinity " + modelLabel + " In " + String.join(",", models) + " (at least " + minimum + " per GPU)");
  }

  /**
   * The pod selects models by its own required node affinity and names a minimum: the models that
   * have it are ANDed into every required term, so kube-scheduler keeps only the models both allow
   * ({@code In [Tesla-M40, Tesla-V100-SXM2-16GB]} and {@code In [Tesla-V100-SXM2-16GB, ...]} leave
   * the V100). A model the pod names that no node has now stays in the list: its memory is not
   * known, and feasibility judges a model no node has. When every model the pod selects is known
   * and lacks the minimum, nothing is added (the pod would match no node): feasibility refuses the
   * contradiction at {@code /validate}. A pod pinned by nodeSelector never gets here: its one model
   * is judged the same way.
   */
  private static void minimumWithinOwnAffinity(
      Pod pod, MutationContext context, String modelLabel, String minimum, MutationReport report) {
    var parsed = GpuModelCatalog.minimumMiB(minimum);
    if (parsed.isEmpty()) {
      report.note("min-gpu-memory \"" + minimum + "\" is not a quantity such as 16Gi; ignored");
      return;
    }
    var catalog = context.models();
    if (catalog.isEmpty()) {
      report.note("no GPU nodes known yet; min-gpu-memory " + minimum + " not applied to the pod's own node affinity on " + modelLabel);
      return;
    }
    var enough = catalog.modelsWithAtLeast(parsed.getAsLong(), context.policy().gpuModel().memoryTolerancePercent());
    var known = catalog.smallestMemoryMiB().keySet();
    var selected = PodSelectors.selectedValues(pod, modelLabel);
    if (selected.isPresent() && known.containsAll(selected.get()) && selected.get().stream().noneMatch(enough::contains)) {
      report.note("none of the GPU models the pod's node affinity selects (" + String.join(", ", new TreeSet<>(selected.get()))
          + ") has min-gpu-memory " + minimum + " per GPU; its affinity was kept as written");
      return;
    }
    if (enough.isEmpty()) {
      report.note("no GPU model in the cluster has " + minimum + " per GPU; min-gpu-memory not applied");
      return;
    }
    var allowed = new TreeSet<>(enough);
    for (var term : NodeAffinityEditor.requiredTerms(pod)) {
      if (term == null || term.getMatchExpressions() == null) {
        continue;
      }
      for (var e : term.getMatchExpressions()) {
        if (e != null && modelLabel.equals(e.getKey()) && "In".equals(e.getOperator()) && e.getValues() != null) {
          e.getValues().stream().filter(v -> v != null && !known.contains(v)).forEach(allowed::add);
        }
      }
    }
    var models = List.copyOf(allowed);
    if (NodeAffinityEditor.requireEverywhere(pod, NodeAffinityEditor.requirement(modelLabel, "In", models))) {
      report.changed(NAME, "node affinity " + modelLabel + " In " + String.join(",", models)
          + " ANDed into each of the pod's required terms (at least " + minimum + " per GPU)");
    }
  }

  /** Node labels spell models with dashes: {@code Tesla V100-SXM2-16GB} is {@code Tesla-V100-SXM2-16GB}. */
  public static String normalise(String model) {
    return model.trim().replace(' ', '-');
  }

}
