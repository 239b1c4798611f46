package io.gpuadmission.allocator;

import java.util.Set;

/**
 * What a pod asks of one node: CPU (milli), a number of GPUs, and the amount it needs on each,
 * in the unit GPU capacity is counted in. A whole GPU is an amount equal to the GPU's capacity (a
 * fully free GPU); a share is less, on one GPU. {@code models} limits the GPU models (empty: any).
 */
public record Task(long cpuMilli, int gpus, long perGpu, Set<String> models) {
  public Task {
    if (cpuMilli < 0 || gpus < 0 || perGpu < 0 || (gpus > 1 && perGpu == 0)) {
      throw new IllegalArgumentException("invalid task: cpu " + cpuMilli + ", " + gpus + " GPUs of " + perGpu);
    }
    models = Set.copyOf(models);
  }

  public static Task share(long cpuMilli, long amount) {
    return new Task(cpuMilli, 1, amount, Set.of());
  }

  public static Task whole(long cpuMilli, int gpus, long gpuCapacity) {
    return new Task(cpuMilli, gpus, gpuCapacity, Set.of());
  }

  /** True when this task may use GPUs of {@code model}. */
  public boolean allows(String model) {
    return models.isEmpty() || models.contains(model);
  }

  /** A share asks part of one GPU; otherwise each GPU must be wholly free. */
  public boolean isShareOf(long gpuCapacity) {
    return gpus == 1 && perGpu < gpuCapacity;
  }
}
