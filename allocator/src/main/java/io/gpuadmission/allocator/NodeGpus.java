package io.gpuadmission.allocator;

import java.util.List;
import java.util.Optional;

/**
 * A node as the allocator sees it: name, GPUs in index order, the link matrix when known, and its
 * CPU capacity and CPU still free (milli-CPU; {@link Long#MAX_VALUE} when the caller does not count
 * CPU).
 */
public record NodeGpus(String name, List<GpuDevice> gpus, Optional<LinkMatrix> links, long cpuCapacity, long cpuFree) {
  public NodeGpus {
    gpus = List.copyOf(gpus);
    for (int i = 0; i < gpus.size(); i++) {
      if (gpus.get(i).index() != i) {
        throw new IllegalArgumentException(name + ": GPU at position " + i + " has index " + gpus.get(i).index());
      }
    }
    if (links.isPresent() && links.get().size() != gpus.size()) {
      throw new IllegalArgumentException(name + ": link matrix for " + links.get().size() + " GPUs, node has " + gpus.size());
    }
  }

  /** A node that does not count CPU. */
  public static NodeGpus withoutCpu(String name, List<GpuDevice> gpus, Optional<LinkMatrix> links) {
    return new NodeGpus(name, gpus, links, Long.MAX_VALUE, Long.MAX_VALUE);
  }

  /** This node after {@code task} took {@code placed} (GPU indices). */
  public NodeGpus after(Task task, int[] placed) {
    var updated = new java.util.ArrayList<>(gpus);
    for (var index : placed) {
      var gpu = updated.get(index);
      updated.set(index, gpu.withUsed(gpu.used() + task.takes(gpu.capacity())));
    }
    return new NodeGpus(name, updated, links, cpuCapacity, cpuFree == Long.MAX_VALUE ? cpuFree : cpuFree - task.cpuMilli());
  }

  // Indexed loops: a for-each over the list would allocate an iterator on the scoring hot path.
  public long gpuFree() {
    long free = 0;
    for (int i = 0; i < gpus.size(); i++) {
      free += gpus.get(i).free();
    }
    return free;
  }

  public long gpuCapacity() {
    long capacity = 0;
    for (int i = 0; i < gpus.size(); i++) {
      capacity += gpus.get(i).capacity();
    }
    return capacity;
  }

  public String model() {
    return gpus.isEmpty() ? "" : gpus.get(0).model();
  }
}
