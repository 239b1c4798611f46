package io.gpuadmission.allocator;

/**
 * For irregular boards too large to enumerate: starts from the best-scoring free pair and adds
 * the GPU that adds most to the set, lowest index on ties. Fast, not guaranteed optimal.
 */
final class GreedySearch {
  private GreedySearch() {}

  static int[] search(LinkMatrix links, int[] free, int count) {
    var chosen = new int[count];
    var used = new boolean[links.size()];
    chosen[0] = free[0];
    if (count > 1) {
      long bestPair = Long.MIN_VALUE;
      for (int a = 0; a < free.length; a++) {
        for (int b = a + 1; b < free.length; b++) {
          if (links.score(free[a], free[b]) > bestPair) {
            bestPair = links.score(free[a], free[b]);
            chosen[0] = free[a];
            chosen[1] = free[b];
          }
        }
      }
    }
    used[chosen[0]] = true;
    if (count > 1) {
      used[chosen[1]] = true;
    }
    for (int depth = Math.min(count, 2); depth < count; depth++) {
      long bestGain = Long.MIN_VALUE;
      var pick = -1;
      for (var g : free) {
        if (used[g]) {
          continue;
        }
        long gain = 0;
        for (int d = 0; d < depth; d++) {
          gain += links.score(g, chosen[d]);
        }
        if (gain > bestGain) {
          bestGain = gain;
          pick = g;
        }
      }
      chosen[depth] = pick;
      used[pick] = true;
    }
    java.util.Arrays.sort(chosen);
    return chosen;
  }
}
