package io.gpuadmission.allocator;

import java.util.Optional;

/**
 * Topology-aware choice of whole GPUs. The chosen set maximises the sum of its pair scores; among
 * equal sets, the one whose remaining free GPUs score highest together (so that later requests
 * still find well-connected sets); among those, the lowest indices. This is exactly what
 * exhaustive search over all sets returns (tests check it), computed by
 * <ul>
 *   <li>grouped search when pair scores depend only on the GPUs' NUMA groups (NVSwitch and
 *       PCIe-only boards, up to 72-GPU NVLink domains): GPUs of a group are interchangeable, so
 *       it chooses how many per group by dynamic programming;</li>
 *   <li>exhaustive enumeration otherwise (irregular boards such as DGX-1's cube mesh, up to 16
 *       GPUs in practice), and a greedy fallback, not guaranteed optimal, for irregular boards too
 *       large to enumerate.</li>
 * </ul>
 */
public final class TopologyAwareStrategy implements WholeGpuStrategy {
  /** Beyond this many candidate sets, an irregular board is searched greedily. */
  static final long EXHAUSTIVE_LIMIT = 2_000_000;

  @Override
  public Optional<GpuChoice> choose(NodeGpus node, int count) {
    if (count <= 0) {
      return Optional.empty();
    }
    var free = new int[WholeGpuStrategy.wholeFree(node)];
    if (free.length < count) {
      return Optional.empty();
    }
    var found = 0;
    for (var gpu : node.gpus()) {
      if (gpu.wholeFree()) {
        free[found++] = gpu.index();
      }
    }
    if (node.links().isEmpty()) {
      return new FirstFitStrategy().choose(node, count);
    }
    var links = node.links().get();
    int[] chosen;
    if (GroupedSearch.applies(links)) {
      chosen = GroupedSearch.search(links, free, count);
    } else if (combinations(free.length, count) <= EXHAUSTIVE_LIMIT) {
      chosen = ExhaustiveSearch.search(links, free, count);
    } else {
      chosen = GreedySearch.search(links, free, count);
    }
    return Optional.of(scored(links, free, chosen));
  }

  /** Without a link matrix every set scores 0 (first fit), so no search is needed. */
  @Override
  public long setScore(NodeGpus node, int count) {
    if (node.links().isEmpty()) {
      return count > 0 && WholeGpuStrategy.wholeFree(node) >= count ? 0 : NO_SET;
    }
    return WholeGpuStrategy.super.setScore(node, count);
  }

  /** The choice with its set score and the score of the free GPUs it leaves. */
  static GpuChoice scored(LinkMatrix links, int[] free, int[] chosen) {
    var inSet = new boolean[links.size()];
    for (var g : chosen) {
      inSet[g] = true;
    }
    long set = 0;
    long rest = 0;
    for (int a = 0; a < free.length; a++) {
      for (int b = a + 1; b < free.length; b++) {
        var i = free[a];
        var j = free[b];
        if (inSet[i] && inSet[j]) {
          set += links.score(i, j);
        } else if (!inSet[i] && !inSet[j]) {
          rest += links.score(i, j);
        }
      }
    }
    return new GpuChoice(chosen, set, rest);
  }

  static long combinations(int n, int k) {
    long c = 1;
    for (int i = 1; i <= k; i++) {
      c = c * (n - k + i) / i;
      if (c > EXHAUSTIVE_LIMIT) {
        return Long.MAX_VALUE;
      }
    }
    return c;
  }
}
