package io.gpuadmission.allocator;

/**
 * Fragmentation gradient descent (Weng et al., USENIX ATC '23): place each task where the
 * expected fragmentation of the cluster, measured against the distribution of the workload's GPU
 * tasks, grows least. Only the chosen node changes, so the cluster's growth is that node's growth.
 *
 * <p>Equal growth is common (identical idle nodes; CPU-only tasks, which rarely change any GPU's
 * usability): those ties go to the node left with the smallest share of free GPU, which sends
 * CPU-only work to nodes whose GPUs are already taken, then to the lower node position.
 */
public final class FgdPolicy extends ScoringPolicy {
  /** Growths closer than this are equal: floating-point noise must not decide. */
  private static final double RESOLUTION = 1e-9;
  private final Fragmentation fragmentation;

  public FgdPolicy(TaskDistribution workload, WholeGpuStrategy whole) {
    super(whole);
    this.fragmentation = new Fragmentation(workload);
  }

  @Override
  protected double score(NodeGpus node, Task task, int[] gpus) {
    var n = node.gpus().size();
    var free = new long[n];
    var capacity = new long[n];
    for (int i = 0; i < n; i++) {
      free[i] = node.gpus().get(i).free();
      capacity[i] = node.gpus().get(i).capacity();
    }
    var before = fragmentation.of(node.model(), node.cpuFree(), free, capacity);
    long taken = 0;
    for (var g : gpus) {
      var amount = task.isShareOf(capacity[g]) ? task.perGpu() : capacity[g];
      free[g] -= amount;
      taken += amount;
    }
    var cpuAfter = node.cpuFree() == Long.MAX_VALUE ? node.cpuFree() : node.cpuFree() - task.cpuMilli();
    var growth = Math.round((fragmentation.of(node.model(), cpuAfter, free, capacity) - before) / RESOLUTION);
    // Growth is counted in steps of RESOLUTION; the tie-break stays below half a step.
    var gpuLeft = node.gpuCapacity() == 0 ? 0 : (node.gpuFree() - taken) / (double) node.gpuCapacity();
    return growth + gpuLeft * 0.5;
  }
}
