package io.gpuadmission.allocator;

/**
 * Fragmentation gradient descent (Weng et al., USENIX ATC '23): place each task where the
 * expected fragmentation of the cluster, measured against the distribution of the workload's GPU
 * tasks, grows least. Only the chosen node changes, so the cluster's growth is that node's growth.
 *
 * <p>Growth is counted in steps of 1/25 of a GPU: smaller differences are noise in an expectation
 * over a task distribution, and within one step the placement that leaves the node with the
 * smallest share of free GPU wins (packing), then the lower node position. The paper's own
 * scheduler quantises the same way through an integer sigmoid score; this is that idea with a
 * linear scale, which keeps large growth differences apart. On the Alibaba trace it is worth
 * about half a point of allocation over exact growth (bench/README.md).
 *
 * <p>With {@link #cpuAware}, growth also counts the GPU a node's CPU strands: FGD's measure asks
 * only whether one more task of each kind fits the node's free CPU, so it sees nothing wrong in
 * filling a CPU-poor node (8 cores per GPU) with CPU-heavy shares until its CPU runs out with GPUs
 * still free, while CPU-rich nodes (50 cores per GPU) sit idle. The workload asks {@code rho}
 * milli-CPU per unit of GPU on average; a node's free CPU can then serve {@code cpuFree / rho} of
 * its free GPU and the rest, {@code max(0, gpuFree - cpuFree / rho)}, is stranded. Its growth is
 * added to the fragmentation's, in the same units, before both are cut into steps: a CPU-light
 * share then lowers the stranded GPU of a CPU-poor node and goes there, a CPU-heavy one raises it
 * and goes to a CPU-rich node. Nothing changes on a node whose CPU is not counted.
 *
 * <p>{@link Variant#LOOKAHEAD} adds, for shares, how much the chosen GPU's expected waste grows as
 * the workload's later shares fill its remainder ({@link RemainderWaste}), weighted {@link
 * #LOOKAHEAD_WEIGHT} times FGD's growth: the lookahead decides and FGD's one-task measure and
 * the stranded CPU break what it leaves even. It opens an empty GPU with a share whose remainder
 * common shares close rather than keep it for one that strands memory only rare shares fit.
 * Whole GPUs are scored as {@link Variant#CPU_AWARE} scores them.
 */
public final class FgdPolicy extends ScoringPolicy {
  /** Growth is compared in steps of this share of one GPU's capacity. */
  static final double STEP_OF_A_GPU = 1.0 / 25;

  /**
   * The lookahead's weight against FGD's growth: the Alibaba trace's live 100-node sample places
   * 86.6–87.0 % from 10 to 40 (bench/README.md).
   */
  static final double LOOKAHEAD_WEIGHT = 20;

  /** Which measure of fragmentation's growth. */
  public enum Variant {
    /** FGD as the paper defines it. */
    PAPER,
    /** Plus the GPU a node's CPU strands. */
    CPU_AWARE,
    /** Plus, for shares, the lookahead over the chosen GPU's remainder. */
    LOOKAHEAD
  }

  private final Fragmentation fragmentation;
  private final TaskDistribution workload;
  private final boolean cpuAware;
  /** Null unless {@link Variant#LOOKAHEAD}. */
  private final RemainderWaste remainders;
  /** The workload's CPU per unit of GPU for the last GPU size asked: one immutable pair, as decisions run on several threads. */
  private volatile Rho lastRho = new Rho(-1, 0);

  private record Rho(long capacity, double value) {}

  /** FGD as the paper defines it. */
  public FgdPolicy(TaskDistribution workload, WholeGpuStrategy whole) {
    this(workload, whole, Variant.PAPER);
  }

  /** FGD, plus the GPU a node's CPU strands when {@code cpuAware} (the class comment). */
  public FgdPolicy(TaskDistribution workload, WholeGpuStrategy whole, boolean cpuAware) {
    this(workload, whole, cpuAware ? Variant.CPU_AWARE : Variant.PAPER);
  }

  /** FGD measured as {@code variant} says (the class comment). */
  public FgdPolicy(TaskDistribution workload, WholeGpuStrategy whole, Variant variant) {
    super(whole);
    this.fragmentation = new Fragmentation(workload);
    this.workload = workload;
    this.cpuAware = variant != Variant.PAPER;
    this.remainders = variant == Variant.LOOKAHEAD ? new RemainderWaste(workload) : null;
  }

  @Override
  protected double score(NodeGpus node, Task task, int[] gpus) {
    if (node.gpus().isEmpty()) {
      // Nothing to fragment and nothing left to strand: the best place for a CPU-only task.
      return 0;
    }
    var step = Math.max(1, node.gpus().get(0).capacity() * STEP_OF_A_GPU);
    long taken = 0;
    for (var g : gpus) {
      taken += task.takes(node.gpus().get(g).capacity());
    }
    var growth = fragmentation.growth(node, task, gpus);
    if (cpuAware && node.cpuFree() != Long.MAX_VALUE) {
      var rho = cpuPerGpuUnit(node.gpus().get(0).capacity());
      var free = node.gpuFree();
      growth += stranded(free - taken, node.cpuFree() - task.cpuMilli(), rho) - stranded(free, node.cpuFree(), rho);
    }
    if (remainders != null && task.isShare()) {
      var gpu = node.gpus().get(gpus[0]);
      growth += LOOKAHEAD_WEIGHT * remainders.growth(gpu.capacity(), gpu.free(), gpu.free() - task.takes(gpu.capacity()));
    }
    var steps = Math.floor(growth / step);
    // The packing term stays below one step.
    var gpuLeft = (node.gpuFree() - taken) / (double) node.gpuCapacity();
    return steps + gpuLeft * 0.5;
  }

  /** The free GPU that {@code cpuFree} cannot serve at {@code rho} milli-CPU per unit; 0 when the workload asks no CPU. */
  static double stranded(long gpuFree, long cpuFree, double rho) {
    return rho <= 0 ? 0 : Math.max(0, gpuFree - cpuFree / rho);
  }

  /**
   * The workload's GPU tasks' mean CPU over their mean GPU, on GPUs of {@code capacity} units (a
   * whole GPU takes all of one). Kept for the last size: a cluster has few, and a decision asks
   * one node after another.
   */
  double cpuPerGpuUnit(long capacity) {
    var last = lastRho;
    if (capacity == last.capacity()) {
      return last.value();
    }
    double cpu = 0;
    double gpu = 0;
    for (int i = 0; i < workload.size(); i++) {
      var t = workload.task(i);
      if (t.gpus() > 0) {
        cpu += workload.probability(i) * t.cpuMilli();
        gpu += workload.probability(i) * t.gpus() * t.takes(capacity);
      }
    }
    var rho = gpu > 0 ? cpu / gpu : 0;
    lastRho = new Rho(capacity, rho);
    return rho;
  }
}
