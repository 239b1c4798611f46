package io.gpuadmission.placement;

import io.gpuadmission.allocator.NodeGpus;
import io.gpuadmission.allocator.NvLinkStrategy;
import io.gpuadmission.contract.GpuAnnotations;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Why a node cannot take a pod, in words a person reads in {@code kubectl describe pod}; {@code
 * unresolvable} when no eviction on that node could make room (kube-scheduler then skips
 * preemption there).
 */
public record NodeRefusal(String reason, boolean unresolvable) {
  static final String UNKNOWN_NODE = "no GPUs known on this node (no GPU labels or allocatable GPU resources)";

  static final String UNSEEN_NODE =
      "gpu-admission has not seen this node yet (its node cache is still filling); retried at the next attempt";

  static NodeRefusal unknownNode() {
    return new NodeRefusal(UNKNOWN_NODE, true);
  }

  static final String DELETED_NODE = "this node was deleted";

  /** Why a node without a GPU view cannot take the pod: it has no GPUs, is gone, or is not seen yet. */
  static NodeRefusal withoutView(GpuLedger ledger, String node) {
    if (ledger.knownWithoutGpus(node)) {
      return unknownNode();
    }
    return ledger.knownDeleted(node) ? new NodeRefusal(DELETED_NODE, true) : unseenNode();
  }

  /** A node the ledger's informer has not shown yet: it may have GPUs, so not unresolvable. */
  static NodeRefusal unseenNode() {
    return new NodeRefusal(UNSEEN_NODE, false);
  }

  /** The refusal for {@code ask} on {@code node}, empty when the node can take it. */
  static Optional<NodeRefusal> of(GpuAsk ask, NodeGpus node, String shareResource) {
    // CPU: what the GPU pods on the node leave (kube-scheduler, counting every pod, has already
    // found at least that much). Models only where the caller set them (the trace simulator).
    if (node.cpuFree() < ask.cpuMilli()) {
      return Optional.of(new NodeRefusal(node.cpuFree() + "m CPU left by the GPU pods here, pod needs " + ask.cpuMilli() + "m", false));
    }
    if (ask.kind() != GpuAsk.Kind.NONE && !ask.models().isEmpty() && !ask.models().contains(node.model())) {
      return Optional.of(new NodeRefusal("GPU model " + node.model() + " is not one of " + new TreeSet<>(ask.models()), true));
    }
    return switch (ask.kind()) {
      case NONE -> Optional.empty();
      case SHARE -> share(ask, node, shareResource);
      case WHOLE -> whole(ask, node);
    };
  }

  private static Optional<NodeRefusal> share(GpuAsk ask, NodeGpus node, String resource) {
    long largestFree = 0;
    long largest = 0;
    for (var gpu : node.gpus()) {
      largestFree = Math.max(largestFree, gpu.free());
      largest = gpu.healthy() ? Math.max(largest, gpu.capacity()) : largest;
    }
    if (largestFree >= ask.memory()) {
      return Optional.empty();
    }
    if (largest < ask.memory()) {
      return Optional.of(
          new NodeRefusal(
              "largest GPU has " + largest + "GiB of " + resource + ", pod needs " + ask.memory() + "GiB" + sick(node), true));
    }
    return Optional.of(
        new NodeRefusal(
            "largest free GPU has " + largestFree + "GiB of " + resource + ", pod needs " + ask.memory() + "GiB" + sick(node),
            false));
  }

  private static Optional<NodeRefusal> whole(GpuAsk ask, NodeGpus node) {
    var free = 0;
    var healthy = 0;
    for (var gpu : node.gpus()) {
      free += gpu.wholeFree() ? 1 : 0;
      healthy += gpu.healthy() ? 1 : 0;
    }
    // The words are built only for a node that refuses: filter runs this for every node.
    if (healthy < ask.count()) {
      return Optional.of(new NodeRefusal("node has " + healthy + " healthy GPUs, pod needs " + ask + sick(node), true));
    }
    if (ask.nvlink()) {
      var unlinked = nvlink(ask, node);
      if (unlinked.isPresent()) {
        return unlinked;
      }
    }
    if (free >= ask.count()) {
      return Optional.empty();
    }
    return Optional.of(new NodeRefusal(free + " of " + node.gpus().size() + " GPUs free, pod needs " + ask + sick(node), false));
  }

  /**
   * Why the node has no NVLink-connected set for the ask. Evicting pods helps only when its healthy
   * GPUs hold such a set; a board that links fewer GPUs pairwise, or a model without a link matrix
   * (nothing shows NVLink there), never will.
   */
  private static Optional<NodeRefusal> nvlink(GpuAsk ask, NodeGpus node) {
    if (node.links().isEmpty()) {
      return Optional.of(
          new NodeRefusal(
              "allocator.topologies has no link matrix for " + node.gpus().size() + " GPUs of model " + node.model()
                  + ", so NVLink between them cannot be shown, pod needs " + ask,
              true));
    }
    var linkable = NvLinkStrategy.largestHealthySet(node).orElse(0);
    if (linkable < ask.count()) {
      return Optional.of(
          new NodeRefusal("the largest NVLink-connected set of this node is " + linkable + " GPUs, pod needs " + ask + sick(node), true));
    }
    var free = NvLinkStrategy.largestFreeSet(node).orElse(0);
    if (free < ask.count()) {
      return Optional.of(
          new NodeRefusal("needs " + ask.count() + " NVLink-connected GPUs, best free set has " + free + sick(node), false));
    }
    return Optional.empty();
  }

  /** {@code "; GPUs 2,3 unhealthy"}, or nothing when all are healthy. */
  private static String sick(NodeGpus node) {
    Set<Integer> sick = new TreeSet<>();
    for (var gpu : node.gpus()) {
      if (!gpu.healthy()) {
        sick.add(gpu.index());
      }
    }
    if (sick.isEmpty()) {
      return "";
    }
    return "; GPU" + (sick.size() == 1 ? " " : "s ") + GpuAnnotations.join(sick.stream().toList()) + " unhealthy";
  }
}
