package io.gpuadmission.allocator;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Expected GPU fragmentation of a node against a task distribution (FGD): for each kind of task,
 * the free GPU amount that task could not use there (all of it when the task does not fit the
 * node; otherwise the free amount of GPUs with less free than min(request per GPU, one GPU), so
 * nothing for a CPU-only task), weighted by how often the kind arrives.
 *
 * <p>Node states repeat a great deal across a cluster, so results are cached per thread in a
 * fixed-size direct-mapped table keyed by a 64-bit fingerprint of the state (GPUs are
 * interchangeable, so the fingerprint ignores their order). Nothing is allocated per call. The
 * table is shared by every instance on a thread, each instance salting its keys: a workload that
 * changes with every pod (learned from the cluster) makes a new instance per decision, which must
 * not cost a new table each time.
 */
public final class Fragmentation {
  private static final int CACHE_SLOTS = 1 << 14;
  private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);
  private static final AtomicLong INSTANCES = new AtomicLong();
  private final TaskDistribution workload;
  private final long salt = mix(INSTANCES.incrementAndGet() * 0x9e3779b97f4a7c15L);

  public Fragmentation(TaskDistribution workload) {
    this.workload = workload;
  }

  /** Per-thread working arrays and cache. */
  private static final class Scratch {
    long[] free = new long[8];
    long[] capacity = new long[8];
    final long[] keys = new long[CACHE_SLOTS];
    final double[] values = new double[CACHE_SLOTS];
    final boolean[] used = new boolean[CACHE_SLOTS];

    void load(NodeGpus node) {
      var n = node.gpus().size();
      if (free.length < n) {
        free = new long[n];
        capacity = new long[n];
      }
      for (int i = 0; i < n; i++) {
        free[i] = node.gpus().get(i).free();
        capacity[i] = node.gpus().get(i).capacity();
      }
    }
  }

  public double of(NodeGpus node) {
    var s = SCRATCH.get();
    s.load(node);
    return of(s, node.model(), node.cpuFree(), node.gpus().size());
  }

  /** How much the node's expected fragmentation grows when {@code task} takes {@code gpus}. */
  public double growth(NodeGpus node, Task task, int[] gpus) {
    var s = SCRATCH.get();
    s.load(node);
    var n = node.gpus().size();
    var before = of(s, node.model(), node.cpuFree(), n);
    for (var g : gpus) {
      s.free[g] -= task.takes(s.capacity[g]);
    }
    var cpuAfter = node.cpuFree() == Long.MAX_VALUE ? node.cpuFree() : node.cpuFree() - task.cpuMilli();
    return of(s, node.model(), cpuAfter, n) - before;
  }

  private double of(Scratch s, String model, long cpuFree, int n) {
    var key = fingerprint(model, cpuFree, s.free, s.capacity, n) ^ salt;
    var slot = (int) (key ^ (key >>> 32)) & (CACHE_SLOTS - 1);
    if (s.used[slot] && s.keys[slot] == key) {
      return s.values[slot];
    }
    var value = compute(model, cpuFree, s.free, s.capacity, n);
    s.used[slot] = true;
    s.keys[slot] = key;
    s.values[slot] = value;
    return value;
  }

  private double compute(String model, long cpuFree, long[] free, long[] capacity, int n) {
    long total = 0;
    for (int g = 0; g < n; g++) {
      total += free[g];
    }
    double expected = 0;
    for (int m = 0; m < workload.size(); m++) {
      expected += workload.probability(m) * unusable(workload.task(m), model, cpuFree, free, capacity, n, total);
    }
    return expected;
  }

  private static long unusable(Task task, String model, long cpuFree, long[] free, long[] capacity, int n, long total) {
    if (task.cpuMilli() > cpuFree || (task.gpus() > 0 && !task.allows(model))) {
      return total;
    }
    if (task.gpus() == 0) {
      // The paper counts GPUs with less free than min(request, 1 GPU): none, for a CPU-only task.
      return 0;
    }
    long fragment = 0;
    var usable = 0;
    for (int g = 0; g < n; g++) {
      var fits = task.isShare() ? free[g] >= task.perGpu() : free[g] == capacity[g] && capacity[g] >= task.perGpu();
      if (fits) {
        usable++;
      } else {
        fragment += free[g];
      }
    }
    return usable >= task.gpus() ? fragment : total;
  }

  /** Order-independent state key: GPUs of a node are interchangeable for fragmentation. */
  private static long fingerprint(String model, long cpuFree, long[] free, long[] capacity, int n) {
    long sumHash = 0;
    long productHash = 1;
    for (int g = 0; g < n; g++) {
      var item = mix(free[g] * 1_000_003L + capacity[g]);
      sumHash += item;
      productHash *= item | 1;
    }
    return mix(model.hashCode() * 31L + cpuFree) ^ mix(sumHash) * 7 ^ productHash ^ n;
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }
}
