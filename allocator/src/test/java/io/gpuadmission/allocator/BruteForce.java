package io.gpuadmission.allocator;

import java.util.Arrays;
import java.util.Optional;

/** The reference the strategies must equal: every subset, scored from scratch. */
final class BruteForce {
  private BruteForce() {}

  /** Best (set score, remaining score), then lexicographically smallest, among free GPUs. */
  static Optional<int[]> choose(LinkMatrix links, boolean[] used, int count) {
    var n = links.size();
    int[] best = null;
    long bestSet = Long.MIN_VALUE;
    long bestRest = Long.MIN_VALUE;
    for (int mask = 0; mask < (1 << n); mask++) {
      if (Integer.bitCount(mask) != count || overlaps(mask, used)) {
        continue;
      }
      long set = 0;
      long rest = 0;
      for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) {
          var inI = (mask >> i & 1) == 1;
          var inJ = (mask >> j & 1) == 1;
          if (inI && inJ) {
            set += links.score(i, j);
          } else if (!inI && !inJ && !used[i] && !used[j]) {
            rest += links.score(i, j);
          }
        }
      }
      var members = members(mask, n);
      if (set > bestSet || (set == bestSet && (rest > bestRest || (rest == bestRest && Arrays.compare(members, best) < 0)))) {
        bestSet = set;
        bestRest = rest;
        best = members;
      }
    }
    return Optional.ofNullable(best);
  }

  private static boolean overlaps(int mask, boolean[] used) {
    for (int i = 0; i < used.length; i++) {
      if (used[i] && (mask >> i & 1) == 1) {
        return true;
      }
    }
    return false;
  }

  private static int[] members(int mask, int n) {
    return java.util.stream.IntStream.range(0, n).filter(i -> (mask >> i & 1) == 1).toArray();
  }
}
