package io.gpuadmission.allocator;

/**
 * The classic placements. {@code BINPACK}: the GPU and node left with the least free GPU (as ACK's
 * gpushare does), filling nodes before opening new ones. {@code SPREAD}: the most free.
 * {@code BEST_FIT}: the node left with the least free GPU and CPU, each as a share of the node.
 */
public final class HeuristicPolicy extends ScoringPolicy {
  /** Which heuristic. */
  public enum Kind {
    BINPACK,
    SPREAD,
    BEST_FIT
  }

  private final Kind kind;

  public HeuristicPolicy(Kind kind, WholeGpuStrategy whole) {
    super(whole);
    this.kind = kind;
  }

  @Override
  protected double score(NodeGpus node, Task task, int[] gpus) {
    var gpuLeft = node.gpuFree() - used(node, task, gpus);
    return switch (kind) {
      // The chosen GPU's leftover first, then the node's: a share goes to the fullest GPU.
      case BINPACK -> freeAfterOnChosen(node, task, gpus) * 1e6 + gpuLeft;
      case SPREAD -> -(freeAfterOnChosen(node, task, gpus) * 1e6 + gpuLeft);
      case BEST_FIT -> fraction(gpuLeft, node.gpuCapacity()) + fraction(node.cpuFree() - task.cpuMilli(), node.cpuCapacity());
    };
  }

  private static long used(NodeGpus node, Task task, int[] gpus) {
    long used = 0;
    for (var g : gpus) {
      var gpu = node.gpus().get(g);
      used += task.takes(gpu.capacity());
    }
    return used;
  }

  private static double fraction(long part, long whole) {
    return whole <= 0 || whole == Long.MAX_VALUE ? 0 : part / (double) whole;
  }
}
