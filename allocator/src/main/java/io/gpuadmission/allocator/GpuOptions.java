package io.gpuadmission.allocator;

/**
 * The GPU choices a task has on a node, handed to a visitor without allocating: each usable GPU
 * for a share (one per distinct free amount, lowest index, since equal GPUs score equally), the
 * first wholly free GPUs for whole GPUs (which free GPUs does not change any score; the
 * topology-aware choice is made once, for the chosen node), nothing for a CPU-only task.
 */
final class GpuOptions {
  static final int[] NONE = new int[0];
  private static final int[][] SINGLE = new int[256][];

  static {
    for (int g = 0; g < SINGLE.length; g++) {
      SINGLE[g] = new int[] {g};
    }
  }

  private GpuOptions() {}

  /** Receives each option; {@code gpus} is only valid during the call. */
  interface Visitor {
    void option(int[] gpus);

    /** A reusable array of at least {@code size} entries for whole-GPU options. */
    int[] scratch(int size);
  }

  /** Visits each option; returns false when the task does not fit. */
  static boolean visit(NodeGpus node, Task task, Visitor visitor) {
    if (!NodeFit.fits(node, task)) {
      return false;
    }
    if (task.gpus() == 0) {
      visitor.option(NONE);
      return true;
    }
    var gpus = node.gpus();
    if (task.isShare()) {
      for (int g = 0; g < gpus.size(); g++) {
        if (NodeFit.usable(gpus.get(g), task) && !seenEarlier(node, g)) {
          visitor.option(g < SINGLE.length ? SINGLE[g] : new int[] {g});
        }
      }
      return true;
    }
    var chosen = visitor.scratch(task.gpus());
    var found = 0;
    for (int g = 0; g < gpus.size() && found < task.gpus(); g++) {
      if (NodeFit.usable(gpus.get(g), task)) {
        chosen[found++] = g;
      }
    }
    visitor.option(found == chosen.length ? chosen : java.util.Arrays.copyOf(chosen, found));
    return true;
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
}
