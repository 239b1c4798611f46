package io.gpuadmission.allocator;

import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * A policy that scores every (node, GPU option) and takes the lowest score; ties go to the lower
 * node position, then to the option seen first (lower GPU index). One decision allocates a fixed
 * amount, whatever the cluster's size.
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
    var score = scorer(task).score(node);
    return Double.isNaN(score) ? OptionalDouble.empty() : OptionalDouble.of(score);
  }

  /** Scores {@code task} on one node after another, reusing its state: nothing allocated per node. */
  public NodeScorer scorer(Task task) {
    return new NodeScorer(task);
  }

  /** One task's best score on any node; not thread-safe (one per decision). */
  public final class NodeScorer {
    private final Best best;

    private NodeScorer(Task task) {
      best = new Best(task);
    }

    /** The best score on {@code node} (lower is better); NaN when the task does not fit. */
    public double score(NodeGpus node) {
      // A NaN or infinite option score is never below the initial infinity, so NaN means no fit.
      best.score = Double.POSITIVE_INFINITY;
      best.node = -1;
      best.gpus = null;
      best.consider(node, 0);
      return best.node < 0 ? Double.NaN : best.score;
    }
  }

  /** The GPUs the task would take on one node, empty when it does not fit. */
  public Optional<int[]> chooseOnNode(NodeGpus node, Task task) {
    return place(List.of(node), task).map(Placement::gpus);
  }

  @Override
  public Optional<Placement> place(List<NodeGpus> nodes, Task task) {
    var best = new Best(task);
    for (int n = 0; n < nodes.size(); n++) {
      best.consider(nodes.get(n), n);
    }
    if (best.node < 0) {
      return Optional.empty();
    }
    var node = nodes.get(best.node);
    if (task.isWhole()) {
      // Which free GPUs did not change the score; the whole-GPU strategy picks them (topology).
      return whole.choose(node, task.gpus()).map(choice -> new Placement(best.node, choice.gpus()));
    }
    return Optional.of(new Placement(best.node, best.gpus));
  }

  /** The best option seen so far in one decision. */
  private final class Best implements GpuOptions.Visitor {
    private final Task task;
    private int[] scratch = new int[0];
    private NodeGpus current;
    private int position;
    double score = Double.POSITIVE_INFINITY;
    int node = -1;
    int[] gpus;

    Best(Task task) {
      this.task = task;
    }

    void consider(NodeGpus candidate, int at) {
      current = candidate;
      position = at;
      GpuOptions.visit(candidate, task, this);
    }

    @Override
    public void option(int[] option) {
      var s = score(current, task, option);
      if (s < score) {
        score = s;
        node = position;
        // Whole-GPU options live in the scratch array; place() asks the whole-GPU strategy instead.
        gpus = option == scratch ? null : option;
      }
    }

    @Override
    public int[] scratch(int size) {
      if (scratch.length != size) {
        scratch = new int[size];
      }
      return scratch;
    }
  }

  /** Free GPU amount the chosen GPUs keep after the task (0 for whole GPUs and CPU tasks). */
  protected static long freeAfterOnChosen(NodeGpus node, Task task, int[] gpus) {
    long free = 0;
    for (var g : gpus) {
      var gpu = node.gpus().get(g);
      free += task.isShare() ? gpu.free() - task.perGpu() : 0;
    }
    return free;
  }
}
