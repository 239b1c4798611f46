package io.gpuadmission.placement;

import io.fabric8.kubernetes.api.model.Node;
import io.gpuadmission.allocator.NodeGpus;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * How many more whole GPUs of one resource each node may give, as kube-scheduler's
 * NodeResourcesFit counts them: the node's {@code status.allocatable} (what its device plugin
 * reports: fewer than the GPU labels say after GPUs turn unhealthy, none while the plugin
 * restarts) less the GPUs its pods already hold. A node whose allocatable is not known is limited
 * by its GPUs alone, as {@link NodeEligibility} leaves it to its labels. Gang planning asks it,
 * so that no member is planned on a node kube-scheduler will refuse it.
 */
public final class AllocatableGpus {
  private final String resource;
  private final Map<String, Long> allocatable;

  private AllocatableGpus(String resource, Map<String, Long> allocatable) {
    this.resource = resource;
    this.allocatable = allocatable;
  }

  /** What the Node objects {@code nodes} list of {@code resource}. */
  public static AllocatableGpus of(String resource, Collection<Node> nodes) {
    var out = new HashMap<String, Long>();
    for (var node : nodes) {
      if (node != null && node.getMetadata() != null && node.getMetadata().getName() != null) {
        NodeEligibility.allocatable(node, resource).ifPresent(units -> out.put(node.getMetadata().getName(), units));
      }
    }
    return new AllocatableGpus(resource, out);
  }

  /**
   * The whole GPUs the node whose GPUs {@code view} shows may still give: allocatable less the GPUs
   * pods hold there (any claim on a GPU, bound, being bound or planned); no limit when not known.
   */
  public int gpusAllowed(NodeGpus view) {
    var listed = allocatable.get(view.name());
    if (listed == null) {
      return Integer.MAX_VALUE;
    }
    return (int) Math.max(0, Math.min(Integer.MAX_VALUE, listed - held(view)));
  }

  /**
   * Why the node gives fewer whole GPUs than it shows free, {@code 4 aliyun.com/gpu allocatable, 2
   * held by pods}; empty when allocatable does not limit it.
   */
  public Optional<String> limit(NodeGpus view) {
    var listed = allocatable.get(view.name());
    if (listed == null || gpusAllowed(view) >= wholeFree(view)) {
      return Optional.empty();
    }
    var held = held(view);
    return Optional.of(listed + " " + resource + " allocatable" + (held == 0 ? "" : ", " + held + " held by pods"));
  }

  /** GPUs some claim takes part of (kube-scheduler counts each pod's request whatever GPU it got). */
  private static long held(NodeGpus view) {
    long held = 0;
    for (var gpu : view.gpus()) {
      held += gpu.used() > 0 ? 1 : 0;
    }
    return held;
  }

  private static long wholeFree(NodeGpus view) {
    long free = 0;
    for (var gpu : view.gpus()) {
      free += gpu.wholeFree() ? 1 : 0;
    }
    return free;
  }
}
