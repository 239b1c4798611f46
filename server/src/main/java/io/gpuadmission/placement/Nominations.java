package io.gpuadmission.placement;

import java.util.List;

/**
 * The GPU asks of pending pods nominated to a node ({@code status.nominatedNodeName}, set by a
 * preemption), which kube-scheduler's filters count on that node for every pod of no higher
 * priority ({@code RunFilterPluginsWithNominatedPods}): the extender holds their GPUs the same
 * way, so that the GPU a preemption freed is not given to a less important pod first.
 */
@FunctionalInterface
public interface Nominations {
  Nominations NONE = (node, priority, exceptUid) -> List.of();

  /** Asks of the pods nominated to {@code node} with a priority of at least {@code priority}, other than {@code exceptUid}. */
  List<GpuAsk> heldOn(String node, int priority, String exceptUid);
}
