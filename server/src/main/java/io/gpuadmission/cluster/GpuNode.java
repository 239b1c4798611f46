package io.gpuadmission.cluster;

import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What the webhook knows of one node from its labels and capacity: its GPU model, per-GPU memory
 * in MiB, GPU count, GPU pool ({@code ack.node.gpu.schedule}) and share placement ({@code
 * ack.node.gpu.placement}). Empty fields mean "not a GPU node" or "not published". {@code
 * allocatable}: the extended resources (names with a {@code /}) the node's {@code
 * status.allocatable} lists, in whole units; a resource it does not list is not known (the
 * device plugin may not have registered yet), which is not the same as one listed at 0.
 */
public record GpuNode(
    String name,
    Optional<String> model,
    OptionalLong memoryMiB,
    int gpuCount,
    Optional<String> pool,
    Optional<String> placement,
    Map<String, Long> allocatable) {

  public GpuNode {
    allocatable = Map.copyOf(allocatable);
  }

  public boolean hasGpus() {
    return gpuCount > 0 || model.isPresent();
  }
}
