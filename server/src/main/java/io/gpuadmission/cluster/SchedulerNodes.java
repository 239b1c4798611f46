package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.Node;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.policy.NodeLabels;
import java.util.List;

/**
 * The Node objects kube-scheduler sends when it does not rely on the extender's cache ({@code
 * nodeCacheCapable: false}). A node that joined a moment ago may be in kube-scheduler's cache
 * before it is in ours: read its GPUs from the object sent, with the same mapping as the informer,
 * rather than refuse it as not seen yet. Nodes the ledger already knows are left to the informer.
 */
public final class SchedulerNodes {
  private SchedulerNodes() {}

  public static void learnUnseen(GpuLedger ledger, List<Node> sent, NodeLabels keys) {
    for (var node : sent) {
      var name = node == null || node.getMetadata() == null ? null : node.getMetadata().getName();
      if (name != null && ledger.view(name).isEmpty()) {
        ledger.learnNode(name, GpuCapacityMapper.map(node, keys));
      }
    }
  }
}
