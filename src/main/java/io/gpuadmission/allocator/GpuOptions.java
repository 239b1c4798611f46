package io.gpuadmission.allocator;

import java.util.Optional;

/**
 * The GPU choices a task has on a node: each usable GPU for a share (one per distinct free
 * amount, lowest index, since equal GPUs score equally), the whole-GPU strategy's set for whole
 * GPUs, and no GPU for a CPU-only task.
 */
final class GpuOptions {
  private static final int[] NONE = new int[0];

  private GpuOptions() {}

  /** Calls {@code consumer} with each option; returns false when the task does not fit. */
  static boolean forEach(NodeGpus node, Task task, WholeGpuStrategy whole, OptionConsumer consumer) {
    if (!NodeFit.fits(node, task)) {
      return false;
    }
    if (task.gpus() == 0) {
      consumer.accept(NONE);
      return true;
    }
    var gpus = node.gpus();
    if (task.isShareOf(gpus.get(0).capacity())) {
      for (int g = 0; g < gpus.size(); g++) {
        var gpu = gpus.get(g);
        if (NodeFit.usable(gpu, task) && !seenEarlier(node, g)) {
          consumer.accept(new int[] {g});
        }
      }
      return true;
    }
    Optional<GpuChoice> choice = whole.choose(node, task.gpus());
    choice.ifPresent(c -> consumer.accept(c.gpus()));
    return choice.isPresent();
  }

  private static boolean seenEarlier(NodeGpus node, int g) {
    var gpu = node.gpus().get(g);
    for (int e = 0; e < g; e++) {
      var earlier = node.gpus().get(e);
      if (earlier.free() == gpu.free() && earlier.capacity() == gpu.capacity() && earlier.healthy() == gpu.healthy()) {
        return true;
      }
    }
    return false;
  }

  /** Receives one option: the GPU indices the task would take. */
  interface OptionConsumer {
    void accept(int[] gpus);
  }
}
