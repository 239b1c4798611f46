package io.gpuadmission.cluster;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * What the webhook knows of one node from its labels and capacity: its GPU model, per-GPU memory
 * in MiB, GPU count, GPU pool ({@code ack.node.gpu.schedule}) and share placement ({@code
 * ack.node.gpu.placement}). Empty fields mean "not a GPU node" or "not published".
 */
public record GpuNode(
    String name,
    Optional<String> model,
    OptionalLong memoryMiB,
    int gpuCount,
    Optional<String> pool,
    Optional<String> placement) {

  public boolean hasGpus() {
    return gpuCount > 0 || model.isPresent();
  }
}
