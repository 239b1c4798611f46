package io.gpuadmission.mutation;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.pod.NodeAffinityEditor;
import io.gpuadmission.pod.PodResources;
import io.gpuadmission.pod.PodSelectors;
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
        || pod.getSpec().getNodeName() != null
        || PodSelectors.selectsByAnyLabel(pod, policy.nodeLabels()::isGpuLabel)) {
      return;
    }
    var modelLabel = policy.nodeLabels().model();
    var requirement = NodeAffinityEditor.requirement(modelLabel, "DoesNotExist", List.of());
    if (NodeAffinityEditor.requireEverywhere(pod, requirement)) {
      report.changed(NAME, "node affinity " + modelLabel + " DoesNotExist (pod asks for no GPU)");
    }
  }

  private static boolean hasExemptOwner(Pod pod, MutationContext context) {
    var owners = pod.getMetadata().getOwnerReferences();
    return owners != null
        && owners.stream().anyMatch(o -> context.policy().cpuPods().isExemptOwner(o.getKind()));
  }
}
