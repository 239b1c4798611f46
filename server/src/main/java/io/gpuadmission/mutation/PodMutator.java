package io.gpuadmission.mutation;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * Runs the mutation rules on a copy of a pod and returns the RFC 6902 patch from the original to
 * the copy. Nobody writes patch operations or JSON-pointer escapes by hand: the patch is a diff.
 */
public final class PodMutator {
  /** Lists the rules that changed a pod, comma-separated, accumulated across reinvocations. */
  public static final String MUTATED_ANNOTATION = "gpu-admission.io/mutated";

  private final List<PodMutationRule> rules;
  private final ObjectMapper mapper;

  public PodMutator(List<PodMutationRule> rules, ObjectMapper mapper) {
    this.rules = List.copyOf(rules);
    this.mapper = mapper;
  }

  /** The rules in the order they run: topology first, it decides the pod's pool and resources. */
  public static List<PodMutationRule> standardRules() {
    return List.of(
        new TopologyJobRule(),
        new SharedGpuMemoryRule(),
        new GpuModelRule(),
        new CpuPodOffGpuNodesRule(),
        new GpuSchedulerRule());
  }

  /** Mutates a pod given as JSON (workload templates, tests); the JSON itself is left as it is. */
  public MutationResult mutate(JsonNode podJson, MutationContext context) {
    try {
      return mutate(mapper.treeToValue(podJson, Pod.class), context);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  /**
   * Runs the rules on {@code pod} itself, which the caller hands over: no copy is made. The patch
   * is the diff between the pod serialized before and after the rules, typed against typed, so
   * that only the rules' edits show, never serializer differences.
   */
  public MutationResult mutate(Pod pod, MutationContext context) {
    if (!applies(pod, context) || pod.getSpec() == null) {
      return new MutationResult(emptyPatch(), List.of(), List.of());
    }
    var before = TreeGenerator.tree(mapper, pod);
    var report = new MutationReport();
    for (var rule : rules) {
      rule.apply(pod, context, report);
    }
    var changed = report.changedRules();
    if (!changed.isEmpty()) {
      recordRules(pod, changed);
    }
    // add, remove and replace only: move and copy operations are correct but hard to read in an audit.
    var patch = PatchDiff.between(before, TreeGenerator.tree(mapper, pod));
    return new MutationResult(patch, changed, report.warnings());
  }

  private static boolean applies(Pod pod, MutationContext context) {
    var policy = context.policy();
    if (policy.isExempt(context.namespace())) {
      return false;
    }
    var labels = pod.getMetadata() == null ? null : pod.getMetadata().getLabels();
    return labels == null || !"true".equals(labels.get(policy.optOutLabel()));
  }

  private static void recordRules(Pod pod, List<String> changed) {
    var annotations =
        pod.getMetadata().getAnnotations() == null
            ? new LinkedHashMap<String, String>()
            : new LinkedHashMap<>(pod.getMetadata().getAnnotations());
    var names = new LinkedHashSet<String>();
    var existing = annotations.get(MUTATED_ANNOTATION);
    if (existing != null && !existing.isBlank()) {
      for (var name : existing.split(",")) {
        names.add(name.trim());
      }
    }
    names.addAll(changed);
    annotations.put(MUTATED_ANNOTATION, String.join(",", names));
    pod.getMetadata().setAnnotations(annotations);
  }

  private ArrayNode emptyPatch() {
    return mapper.createArrayNode();
  }
}
