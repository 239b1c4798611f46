package io.gpuadmission.allocator;

/**
 * Enumerates every set of {@code count} free GPUs in lexicographic order, keeping the first with
 * the best (set score, remaining score). Scores are updated incrementally: adding GPU g adds its
 * scores to the GPUs already chosen, and the remaining score is the free GPUs' total minus every
 * pair that touches the set.
 */
final class ExhaustiveSearch {
  private final LinkMatrix links;
  private final int[] free;
  private final int count;
  private final long[] rowFree;
  private final long totalFree;
  private final int[] current;
  private final long maxPair;
  private int[] best;
  private long bestSet = Long.MIN_VALUE;
  private long bestRest = Long.MIN_VALUE;

  private ExhaustiveSearch(LinkMatrix links, int[] free, int count) {
    this.links = links;
    this.free = free;
    this.count = count;
    this.current = new int[count];
    this.rowFree = new long[links.size()];
    long total = 0;
    for (int a = 0; a < free.length; a++) {
      for (int b = 0; b < free.length; b++) {
        if (a != b) {
          rowFree[free[a]] += links.score(free[a], free[b]);
        }
      }
      total += rowFree[free[a]];
    }
    this.totalFree = total / 2;
    long max = 0;
    for (var a : free) {
      for (var b : free) {
        if (a != b) {
          max = Math.max(max, links.score(a, b));
        }
      }
    }
    this.maxPair = max;
  }

  static int[] search(LinkMatrix links, int[] free, int count) {
    var search = new ExhaustiveSearch(links, free, count);
    search.extend(0, 0, 0, 0);
    return search.best;
  }

  private void extend(int from, int depth, long setScore, long rowSum) {
    if (depth == count) {
      // Pairs touching the set = rowSum - setScore; the rest is what stays free.
      var rest = totalFree - rowSum + setScore;
      if (setScore > bestSet || (setScore == bestSet && rest > bestRest)) {
        bestSet = setScore;
        bestRest = rest;
        best = current.clone();
      }
      return;
    }
    // No completion can beat the best set when even maximal pairs would not reach it.
    var pairsToAdd = (long) count * (count - 1) / 2 - (long) depth * (depth - 1) / 2;
    if (best != null && setScore + pairsToAdd * maxPair < bestSet) {
      return;
    }
    for (int a = from; a <= free.length - (count - depth); a++) {
      var g = free[a];
      long added = 0;
      for (int d = 0; d < depth; d++) {
        added += links.score(g, current[d]);
      }
      current[depth] = g;
      extend(a + 1, depth + 1, setScore + added, rowSum + rowFree[g]);
    }
  }
}
