package io.gpuadmission.node;

import io.gpuadmission.allocator.GpuDevice;
import io.gpuadmission.allocator.LinkMatrix;
import io.gpuadmission.allocator.NodeGpus;
import io.gpuadmission.allocator.TopologyAwareStrategy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The device plugin's answer when no bound choice fits (a pod another scheduler bound, a choice no
 * longer free): the allocator's topology-best {@code size} GPUs among {@code available} that
 * include {@code mustInclude}. Without {@code mustInclude} it is the allocator's own choice
 * ({@link TopologyAwareStrategy}); with it, the set of best pair-score sum that holds them
 * (lowest indices among equals), searched over the GPUs of one node.
 */
final class BestSet {
  /** Beyond this many sets, the rest is filled greedily. */
  private static final long EXHAUSTIVE_LIMIT = 200_000;

  private BestSet() {}

  static List<Integer> of(LinkMatrix links, Set<Integer> available, Set<Integer> mustInclude, int size) {
    var must = new TreeSet<>(mustInclude);
    var free = new TreeSet<>(available);
    free.removeIf(g -> g < 0 || g >= links.size());
    must.removeIf(g -> g < 0 || g >= links.size());
    if (size <= 0 || free.size() + must.size() < size) {
      return List.of();
    }
    if (must.isEmpty()) {
      var gpus = new ArrayList<GpuDevice>();
      for (int i = 0; i < links.size(); i++) {
        gpus.add(new GpuDevice(i, "", 1, free.contains(i) ? 0 : 1, true));
      }
      return new TopologyAwareStrategy().choose(NodeGpus.withoutCpu("", gpus, java.util.Optional.of(links)), size)
          .map(c -> Arrays.stream(c.gpus()).boxed().toList()).orElse(List.of());
    }
    free.removeAll(must);
    var rest = free.stream().mapToInt(Integer::intValue).toArray();
    var need = size - must.size();
    if (need <= 0) {
      return must.stream().limit(size).toList();
    }
    var base = must.stream().mapToInt(Integer::intValue).toArray();
    int[] best = null;
    long bestScore = Long.MIN_VALUE;
    if (combinations(rest.length, need) <= EXHAUSTIVE_LIMIT) {
      var pick = new int[need];
      for (int i = 0; i < need; i++) {
        pick[i] = i;
      }
      while (true) {
        var set = new int[base.length + need];
        System.arraycopy(base, 0, set, 0, base.length);
        for (int i = 0; i < need; i++) {
          set[base.length + i] = rest[pick[i]];
        }
        var score = score(links, set);
        if (score > bestScore) {
          bestScore = score;
          best = set;
        }
        var i = need - 1;
        while (i >= 0 && pick[i] == rest.length - need + i) {
          i--;
        }
        if (i < 0) {
          break;
        }
        pick[i]++;
        for (int j = i + 1; j < need; j++) {
          pick[j] = pick[j - 1] + 1;
        }
      }
    } else {
      var set = new ArrayList<>(must);
      var left = new TreeSet<>(free);
      while (set.size() < size) {
        int pickGpu = -1;
        long pickScore = Long.MIN_VALUE;
        for (var g : left) {
          long s = 0;
          for (var h : set) {
            s += links.score(g, h);
          }
          if (s > pickScore) {
            pickScore = s;
            pickGpu = g;
          }
        }
        set.add(pickGpu);
        left.remove(pickGpu);
      }
      return set.stream().sorted().toList();
    }
    return Arrays.stream(best).sorted().boxed().toList();
  }

  private static long score(LinkMatrix links, int[] set) {
    long sum = 0;
    for (int a = 0; a < set.length; a++) {
      for (int b = a + 1; b < set.length; b++) {
        sum += links.score(set[a], set[b]);
      }
    }
    return sum;
  }

  private static long combinations(int n, int k) {
    long c = 1;
    for (int i = 1; i <= k; i++) {
      c = c * (n - k + i) / i;
      if (c > EXHAUSTIVE_LIMIT) {
        return c;
      }
    }
    return c;
  }
}
