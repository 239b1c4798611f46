package io.gpuadmission.mutation;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.pod.NodeAffinityEditor;
import io.gpuadmission.pod.PodResources;
import io.gpuadmission.pod.PodSelectors;
import io.gpuadmission.pod.TopologyJob;
import java.util.List;

/**
 * Keeps a pod that asks for no GPU off GPU nodes, so GPUs are not stranded behind CPU work: the
 * model label must not exist, ANDed into every required term (terms are ORed, so a separate term
 * would let the pod through on any GPU node).
 */
public final class CpuPodOffGpuNodesRule implements PodMutationRule {
  public static final String NAME = "cpu-off-gpu-nodes";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void apply(Pod pod, MutationContext context, MutationReport report) {
    var policy = context.policy();
    if (!policy.cpuPods().keepOffGpuNodes()
        || PodResources.asksFor(pod, policy::isGpuResource)
        || hasExemptOwner(pod, context)
        // A pod bound by name skips the scheduler; the kubelet would reject it on a GPU node.
        || pod.getSpec().getNodeName() != null) {
      return;
    }
    if (PodSelectors.selectsByAnyLabel(pod, policy.nodeLabels()::isGpuLabel)) {
      // A member of a topology job that asks no GPU (a TFJob's PS) is sent to the topology pool by the topology rule, not by its user.
      if (TopologyJob.of(pod, policy.topology()).isEmpty()) {
        report.note(usersChoice(pod, context) + " although the pod asks for no GPU; the policy (cpuPods.keepOffGpuNodes) would keep it off GPU nodes");
      }
      return;
    }
    var modelLabel = policy.nodeLabels().model();
    var requirement = NodeAffinityEditor.requirement(modelLabel, "DoesNotExist", List.of());
    if (NodeAffinityEditor.requireEverywhere(pod, requirement)) {
      report.changed(NAME, "node affinity " + modelLabel + " DoesNotExist (pod asks for no GPU)");
    }
  }

  /** {@code kept nodeSelector K=V}, or {@code kept the pod's own node affinity on K}: the GPU label it chose nodes by. */
  private static String usersChoice(Pod pod, MutationContext context) {
    var labels = context.policy().nodeLabels();
    var selector = pod.getSpec().getNodeSelector();
    if (selector != null) {
      for (var entry : selector.entrySet()) {
        if (labels.isGpuLabel(entry.getKey())) {
          return "kept nodeSelector " + entry.getKey() + "=" + entry.getValue();
        }
      }
    }
    for (var term : NodeAffinityEditor.requiredTerms(pod)) {
      for (var e : term == null || term.getMatchExpressions() == null ? List.<io.fabric8.kubernetes.api.model.NodeSelectorRequirement>of() : term.getMatchExpressions()) {
        if (e != null && e.getKey() != null && labels.isGpuLabel(e.getKey()) && PodSelectors.attracts(e)) {
          return "kept the pod's own node affinity on " + e.getKey();
        }
      }
    }
    return "kept the pod's own node selection";
  }

  private static boolean hasExemptOwner(Pod pod, MutationContext context) {
    var owners = pod.getMetadata().getOwnerReferences();
    return owners != null
        && owners.stream().anyMatch(o -> context.policy().cpuPods().isExemptOwner(o.getKind()));
  }
}
