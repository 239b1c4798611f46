package io.gpuadmission.allocator;

import java.util.Set;

/**
 * What a pod asks of one node: CPU (milli) and, by {@code kind}, no GPU, a share of one GPU
 * ({@code perGpu} of its capacity, in the unit capacity is counted in), or {@code gpus} whole GPUs,
 * each wholly free and of at least {@code perGpu} capacity (0: any size). The kind is said, never
 * inferred from amounts: a whole GPU of one node may be the size of a share of another's.
 * {@code models} limits the GPU models (empty: any).
 */
public record Task(Kind kind, long cpuMilli, int gpus, long perGpu, Set<String> models) {
  /** Whether a task takes no GPU, part of one, or whole ones. */
  public enum Kind {
    NONE,
    SHARE,
    WHOLE
  }

  public Task {
    var valid =
        cpuMilli >= 0
            && perGpu >= 0
            && switch (kind) {
              case NONE -> gpus == 0 && perGpu == 0;
              case SHARE -> gpus == 1 && perGpu > 0;
              case WHOLE -> gpus > 0;
            };
    if (!valid) {
      throw new IllegalArgumentException("invalid " + kind + " task: cpu " + cpuMilli + ", " + gpus + " GPUs of " + perGpu);
    }
    models = Set.copyOf(models);
  }

  /** CPU only. */
  public static Task none(long cpuMilli) {
    return new Task(Kind.NONE, cpuMilli, 0, 0, Set.of());
  }

  public static Task share(long cpuMilli, long amount) {
    return new Task(Kind.SHARE, cpuMilli, 1, amount, Set.of());
  }

  /** {@code gpus} whole GPUs of any size. */
  public static Task whole(long cpuMilli, int gpus) {
    return new Task(Kind.WHOLE, cpuMilli, gpus, 0, Set.of());
  }

  /** This task limited to GPUs of {@code allowed} models. */
  public Task withModels(Set<String> allowed) {
    return new Task(kind, cpuMilli, gpus, perGpu, allowed);
  }

  /** True when this task may use GPUs of {@code model}. */
  public boolean allows(String model) {
    return models.isEmpty() || models.contains(model);
  }

  /** A share asks part of one GPU; otherwise each GPU must be wholly free. */
  public boolean isShare() {
    return kind == Kind.SHARE;
  }

  /** Whole GPUs: the whole-GPU strategy picks which free ones. */
  public boolean isWhole() {
    return kind == Kind.WHOLE;
  }

  /** What this task takes of a GPU of {@code capacity}: its share, or all of it. */
  public long takes(long capacity) {
    return isShare() ? perGpu : capacity;
  }
}
