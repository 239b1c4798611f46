package io.gpuadmission.placement;

import java.util.List;
import java.util.Optional;

/**
 * The GPUs a node offers, from its labels and {@code status.allocatable}: model, memory of each
 * GPU in GiB (index order; GPUs of one node may differ in size), the {@code ack.node.gpu.placement}
 * label when set.
 */
public record GpuNodeCapacity(String name, String model, List<Long> memory, Optional<String> placement) {
  public GpuNodeCapacity {
    memory = List.copyOf(memory);
  }

  public int count() {
    return memory.size();
  }
}
