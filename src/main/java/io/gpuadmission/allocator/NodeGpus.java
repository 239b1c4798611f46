package io.gpuadmission.allocator;

import java.util.List;
import java.util.Optional;

/**
 * A node as the allocator sees it: name, GPUs in index order, the link matrix when known, and the
 * CPU still free (milli-CPU; {@link Long#MAX_VALUE} when the caller does not count CPU).
 */
public record NodeGpus(String name, List<GpuDevice> gpus, Optional<LinkMatrix> links, long cpuFree) {
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

  public String model() {
    return gpus.isEmpty() ? "" : gpus.get(0).model();
  }
}
