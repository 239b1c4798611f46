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
    var growth = Math.round(fragmentation.growth(node, task, gpus) / RESOLUTION);
    long taken = 0;
    for (var g : gpus) {
      var capacity = node.gpus().get(g).capacity();
      taken += task.isShareOf(capacity) ? task.perGpu() : capacity;
    }
    // Growth is counted in steps of RESOLUTION; the tie-break stays below half a step.
    var gpuLeft = node.gpuCapacity() == 0 ? 0 : (node.gpuFree() - taken) / (double) node.gpuCapacity();
    return growth + gpuLeft * 0.5;
  }
}
