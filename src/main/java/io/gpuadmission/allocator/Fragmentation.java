package io.gpuadmission.allocator;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Expected GPU fragmentation of a node against a task distribution (FGD): for each kind of task,
 * the free GPU amount that task could not use there (all of it when the task does not fit the
 * node; otherwise the free amount of GPUs with less free than min(request per GPU, one GPU), so
 * nothing for a CPU-only task), weighted by how often the kind arrives. Results are cached by node state, which repeats a great deal across a cluster.
 */
public final class Fragmentation {
  private final TaskDistribution workload;
  private final ConcurrentHashMap<Long, Double> byState = new ConcurrentHashMap<>();

  public Fragmentation(TaskDistribution workload) {
    this.workload = workload;
  }

  /** The expected fragmentation of a node whose GPUs have {@code free} of {@code capacity}. */
  public double of(String model, long cpuFree, long[] free, long[] capacity) {
    var key = fingerprint(model, cpuFree, free, capacity);
    var cached = byState.get(key);
    if (cached != null) {
      return cached;
    }
    var value = compute(model, cpuFree, free, capacity);
    byState.put(key, value);
    return value;
  }

  public double of(NodeGpus node) {
    return of(node.model(), node.cpuFree(), free(node), capacity(node));
  }

  /** How much the node's expected fragmentation grows when {@code task} takes {@code gpus}. */
  public double growth(NodeGpus node, Task task, int[] gpus) {
    var free = free(node);
    var capacity = capacity(node);
    var before = of(node.model(), node.cpuFree(), free, capacity);
    for (var g : gpus) {
      free[g] -= task.isShareOf(capacity[g]) ? task.perGpu() : capacity[g];
    }
    var cpuAfter = node.cpuFree() == Long.MAX_VALUE ? node.cpuFree() : node.cpuFree() - task.cpuMilli();
    return of(node.model(), cpuAfter, free, capacity) - before;
  }

  private static long[] free(NodeGpus node) {
    var free = new long[node.gpus().size()];
    for (int i = 0; i < free.length; i++) {
      free[i] = node.gpus().get(i).free();
    }
    return free;
  }

  private static long[] capacity(NodeGpus node) {
    var capacity = new long[node.gpus().size()];
    for (int i = 0; i < capacity.length; i++) {
      capacity[i] = node.gpus().get(i).capacity();
    }
    return capacity;
  }

  private double compute(String model, long cpuFree, long[] free, long[] capacity) {
    long total = 0;
    for (var f : free) {
      total += f;
    }
    double expected = 0;
    for (int m = 0; m < workload.size(); m++) {
      var task = workload.task(m);
      expected += workload.probability(m) * unusable(task, model, cpuFree, free, capacity, total);
    }
    return expected;
  }

  private static long unusable(Task task, String model, long cpuFree, long[] free, long[] capacity, long total) {
    if (task.cpuMilli() > cpuFree || (task.gpus() > 0 && !task.allows(model))) {
      return total;
    }
    if (task.gpus() == 0) {
      // The paper counts GPUs with less free than min(request, 1 GPU): none, for a CPU-only task.
      return 0;
    }
    long fragment = 0;
    var usable = 0;
    for (int g = 0; g < free.length; g++) {
      var fits = task.isShareOf(capacity[g]) ? free[g] >= task.perGpu() : free[g] == capacity[g] && capacity[g] >= task.perGpu();
      if (fits) {
        usable++;
      } else {
        fragment += free[g];
      }
    }
    return usable >= task.gpus() ? fragment : total;
  }

  /** Order-independent state key: GPUs of a node are interchangeable for fragmentation. */
  private static long fingerprint(String model, long cpuFree, long[] free, long[] capacity) {
    long sumHash = 0;
    long productHash = 1;
    for (int g = 0; g < free.length; g++) {
      var item = mix(free[g] * 1_000_003L + capacity[g]);
      sumHash += item;
      productHash *= item | 1;
    }
    return mix(model.hashCode() * 31L + cpuFree) ^ mix(sumHash) * 7 ^ productHash ^ free.length;
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }
}
