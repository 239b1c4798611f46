package io.gpuadmission.placement;

import java.util.List;
import java.util.Optional;

/**
 * The GPUs a node offers, from its labels and {@code status.allocatable}: model, memory of each
 * GPU in GiB (index order; GPUs of one node may differ in size), the {@code ack.node.gpu.placement}
 * label when set, and its allocatable CPU (milli; {@link Long#MAX_VALUE} when unknown), from which
 * the ledger subtracts what the GPU pods on it request. kube-scheduler alone decides whether a pod
 * fits a node's CPU (it counts every pod); FGD weighs what the GPU pods leave.
 */
public record GpuNodeCapacity(String name, String model, List<Long> memory, Optional<String> placement, long cpuMilli) {
  public GpuNodeCapacity {
    memory = List.copyOf(memory);
  }

  /** A node whose CPU is not counted. */
  public GpuNodeCapacity(String name, String model, List<Long> memory, Optional<String> placement) {
    this(name, model, memory, placement, Long.MAX_VALUE);
  }

  public int count() {
    return memory.size();
  }
}
