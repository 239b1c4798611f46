package io.gpuadmission.placement;

import io.gpuadmission.allocator.NodeGpus;
import io.gpuadmission.allocator.ScoringPolicy;
import io.gpuadmission.allocator.Task;
import io.gpuadmission.allocator.WholeGpuStrategy;

/**
 * Raw scores of one ask on node after node, for one prioritize (or the trace simulator's choice of
 * a node): lower is better, NaN when the ask does not fit. Shares (and, where CPU is counted, pods
 * without GPUs) by the share strategy (binpack, spread or FGD). Whole GPUs by the same strategy,
 * after topology where a link matrix makes it matter: a node whose board could give the ask a
 * better-connected set than the best one free now loses to any node that gives the best its board
 * has (or has no matrix, where every set is alike). Prioritize scores thousands of nodes per call,
 * so the task and the strategy's scorer
 * are kept from one node to the next while they stay the same: nothing is allocated per node
 * unless the node has a link matrix. Not thread-safe: one per decision.
 */
final class NodeScorer {
  /** A loss of connectivity outweighs any strategy score: where it counts, topology decides first. */
  private static final double TOPOLOGY_FIRST = 1e6;

  private final PlacementStrategies strategies;
  private final GpuLedger ledger;
  private final GpuAsk ask;
  private Task task;
  private ScoringPolicy scoring;
  private ScoringPolicy.NodeScorer scorer;

  NodeScorer(PlacementStrategies strategies, GpuLedger ledger, GpuAsk ask) {
    this.strategies = strategies;
    this.ledger = ledger;
    this.ask = ask;
  }

  /** The ask's raw score on {@code view}, the GPUs of node {@code name}; NaN when it does not fit. */
  double score(String name, NodeGpus view) {
    var score = scorer(name, view).score(view);
    if (Double.isNaN(score) || ask.kind() != GpuAsk.Kind.WHOLE) {
      return score;
    }
    var linked = strategies.withLinks(view);
    var set = strategies.whole(ask).setScore(linked, ask.count());
    return set == WholeGpuStrategy.NO_SET ? Double.NaN : strategies.topologyLoss(ask, linked, set) * TOPOLOGY_FIRST + score;
  }

  private ScoringPolicy.NodeScorer scorer(String name, NodeGpus view) {
    var placement = ledger.capacity(name).flatMap(GpuNodeCapacity::placement);
    var policy = strategies.shareScoring(placement);
    if (task == null) {
      task = ask.task();
      scorer = null;
    }
    if (scorer == null || policy != scoring) {
      scoring = policy;
      scorer = policy.scorer(task);
    }
    return scorer;
  }
}
