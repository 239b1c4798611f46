package io.gpuadmission.allocator;

import java.util.Optional;

/** The lowest-indexed free GPUs, ignoring topology (the plain device plugin's behaviour). */
public final class FirstFitStrategy implements WholeGpuStrategy {
  @Override
  public Optional<GpuChoice> choose(NodeGpus node, int count) {
    var chosen = new int[count];
    var found = 0;
    for (var gpu : node.gpus()) {
      if (found < count && gpu.wholeFree()) {
        chosen[found++] = gpu.index();
      }
    }
    return found == count && count > 0 ? Optional.of(new GpuChoice(chosen, 0, 0)) : Optional.empty();
  }

  /** Links play no part: any {@code count} free GPUs score 0. */
  @Override
  public long setScore(NodeGpus node, int count) {
    return count > 0 && WholeGpuStrategy.wholeFree(node) >= count ? 0 : NO_SET;
  }
}
