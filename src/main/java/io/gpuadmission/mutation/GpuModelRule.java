package io.gpuadmission.mutation;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.cluster.GpuModelCatalog;
import io.gpuadmission.pod.NodeAffinityEditor;
import io.gpuadmission.pod.PodResources;
import io.gpuadmission.pod.PodSelectors;
import io.gpuadmission.policy.KubernetesNames;
import java.util.List;

/**
 * Pins a whole-GPU pod to a GPU model: the model it names in an annotation, else its namespace's
 * default; or, when it names a minimum GPU memory, to the models that have that much. The model
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
    var annotations = pod.getMetadata().getAnnotations();
    var asked = annotations == null ? null : annotations.get(policy.gpuModel().modelAnnotation());
    var model = asked != null ? asked : policy.gpuModel().namespaceDefaults().get(context.namespace());
    if (PodSelectors.selectsByLabel(pod, modelLabel)) {
      if (model != null) {
        keptUsersChoice(pod, modelLabel, model, asked != null ? "the pod asks for GPU model " + asked
            : "namespace " + context.namespace() + "'s default GPU model is " + model, report);
      }
      return;
    }
    if (model != null) {
      pin(pod, modelLabel, model, asked != null ? "asked by annotation" : "namespace default", report);
      return;
    }
    var minimum = annotations == null ? null : annotations.get(policy.gpuModel().minMemoryAnnotation());
    if (minimum != null) {
      restrictByMemory(pod, context, modelLabel, minimum, report);
    }
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

  private static void pin(Pod pod, String modelLabel, String model, String why, MutationReport report) {
    var value = normalise(model);
    if (value.isEmpty() || !KubernetesNames.isLabelValue(value)) {
      report.note("GPU model \"" + model + "\" is not a valid label value; the pod was not pinned to a model");
      return;
    }
    PodSelectors.putNodeSelector(pod, modelLabel, value);
    report.changed(NAME, "nodeSelector " + modelLabel + "=" + value + " (" + why + ")");
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

  /** Node labels spell models with dashes: {@code Tesla V100-SXM2-16GB} is {@code Tesla-V100-SXM2-16GB}. */
  static String normalise(String model) {
    return model.trim().replace(' ', '-');
  }

}
