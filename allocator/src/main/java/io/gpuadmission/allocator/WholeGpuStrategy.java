package io.gpuadmission.allocator;

import java.util.Optional;

/** Chooses {@code count} whole free GPUs of one node, or none when the node cannot serve. */
public interface WholeGpuStrategy {
  /** Returned by {@link #setScore} when the node cannot serve. */
  long NO_SET = Long.MIN_VALUE;

  Optional<GpuChoice> choose(NodeGpus node, int count);

  /**
   * The pair-score sum of the set {@link #choose} would pick, or {@link #NO_SET}: what scoring
   * every node of a cluster needs, which strategies may compute without building the choice.
   */
  default long setScore(NodeGpus node, int count) {
    return choose(node, count).map(GpuChoice::setScore).orElse(NO_SET);
  }

  /** How many GPUs of {@code node} are wholly free. */
  static int wholeFree(NodeGpus node) {
    var free = 0;
    var gpus = node.gpus();
    for (int i = 0; i < gpus.size(); i++) {
      free += gpus.get(i).wholeFree() ? 1 : 0;
    }
    return free;
  }
}
