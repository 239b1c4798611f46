package io.gpuadmission.allocator;

import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * A policy that scores every (node, GPU option) and takes the lowest score; ties go to the lower
 * node position, then to the option seen first (lower GPU index).
 */
public abstract class ScoringPolicy implements PlacementPolicy {
  private final WholeGpuStrategy whole;

  protected ScoringPolicy(WholeGpuStrategy whole) {
    this.whole = whole;
  }

  /** Lower is better. {@code gpus} are the indices the task would take on {@code node}. */
  protected abstract double score(NodeGpus node, Task task, int[] gpus);

  /** The best score a task can get on one node (lower is better), empty when it does not fit. */
  public OptionalDouble scoreNode(NodeGpus node, Task task) {
    var best = bestOn(node, task);
    return best == null ? OptionalDouble.empty() : OptionalDouble.of(best.score);
  }

  /** The GPUs the task would take on one node, empty when it does not fit. */
  public Optional<int[]> chooseOnNode(NodeGpus node, Task task) {
    var best = bestOn(node, task);
    return best == null ? Optional.empty() : Optional.of(best.gpus.clone());
  }

  private Scored bestOn(NodeGpus node, Task task) {
    var best = new Scored[1];
    GpuOptions.forEach(
        node,
        task,
        whole,
        gpus -> {
          var s = score(node, task, gpus);
          if (best[0] == null || s < best[0].score) {
            best[0] = new Scored(s, gpus);
          }
        });
    return best[0];
  }

  private record Scored(double score, int[] gpus) {}

  @Override
  public Optional<Placement> place(List<NodeGpus> nodes, Task task) {
    Scored best = null;
    var bestNode = -1;
    for (int n = 0; n < nodes.size(); n++) {
      var candidate = bestOn(nodes.get(n), task);
      if (candidate != null && (best == null || candidate.score < best.score)) {
        best = candidate;
        bestNode = n;
      }
    }
    return best == null ? Optional.empty() : Optional.of(new Placement(bestNode, best.gpus));
  }

  /** Free GPU amount the chosen GPUs keep after the task (0 for whole GPUs and CPU tasks). */
  protected static long freeAfterOnChosen(NodeGpus node, Task task, int[] gpus) {
    long free = 0;
    for (var g : gpus) {
      var gpu = node.gpus().get(g);
      free += task.isShareOf(gpu.capacity()) ? gpu.free() - task.perGpu() : 0;
    }
    return free;
  }
}
