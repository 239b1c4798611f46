package io.gpuadmission.allocator;

import java.util.Arrays;

/**
 * Search for boards whose pair scores depend only on the two GPUs' NUMA groups, with one score for
 * every pair of different groups (NVSwitch and PCIe-only boards). GPUs of a group are then
 * interchangeable and a set is described by how many GPUs it takes from each group: the set score
 * is {@code c*C(k,2) + sum_g d_g*C(x_g,2)} and the remaining score has the same form, so dynamic
 * programming over groups finds the best counts. The lowest indices among the best sets are then
 * fixed GPU by GPU: take a GPU if some best set is still reachable with it.
 */
final class GroupedSearch {
  private static final long NONE = Long.MIN_VALUE / 4;
  private static final int SHIFT = 32;

  private final int groups;
  private final long[] bonus;
  private final int[] freeInGroup;
  private final int count;

  private GroupedSearch(LinkMatrix links, int[] free, int count) {
    var table = links.groupScores();
    this.groups = table.length;
    this.count = count;
    var cross = crossScore(table);
    this.bonus = new long[groups];
    for (int g = 0; g < groups; g++) {
      // A group of one GPU has no inner pair; C(x,2) is 0 for it anyway.
      bonus[g] = table[g][g] == Integer.MIN_VALUE ? 0 : table[g][g] - cross;
    }
    this.freeInGroup = new int[groups];
    for (var gpu : free) {
      freeInGroup[links.group(gpu)]++;
    }
  }

  static boolean applies(LinkMatrix links) {
    var table = links.groupScores();
    return table != null && crossScore(table) != Integer.MIN_VALUE + 1;
  }

  /** The one score of pairs in different groups, or MIN_VALUE + 1 when they differ. */
  private static int crossScore(int[][] table) {
    var cross = Integer.MIN_VALUE;
    for (int a = 0; a < table.length; a++) {
      for (int b = 0; b < table.length; b++) {
        if (a != b && table[a][b] != Integer.MIN_VALUE) {
          if (cross != Integer.MIN_VALUE && cross != table[a][b]) {
            return Integer.MIN_VALUE + 1;
          }
          cross = table[a][b];
        }
      }
    }
    return cross == Integer.MIN_VALUE ? 0 : cross;
  }

  static int[] search(LinkMatrix links, int[] free, int count) {
    var search = new GroupedSearch(links, free, count);
    var lo = new int[search.groups];
    var hi = search.freeInGroup.clone();
    var optimum = search.best(lo, hi);
    var chosen = new int[count];
    var taken = 0;
    for (var gpu : free) {
      if (taken == count) {
        break;
      }
      var g = links.group(gpu);
      if (hi[g] == lo[g]) {
        continue;
      }
      lo[g]++;
      if (search.best(lo, hi) == optimum) {
        chosen[taken++] = gpu;
      } else {
        lo[g]--;
        hi[g] = lo[g];
      }
    }
    return chosen;
  }

  /** Best combined value with between lo[g] and hi[g] GPUs from each group, count in all. */
  private long best(int[] lo, int[] hi) {
    var dp = new long[count + 1];
    Arrays.fill(dp, NONE);
    dp[0] = 0;
    for (int g = 0; g < groups; g++) {
      var next = new long[count + 1];
      Arrays.fill(next, NONE);
      for (int r = 0; r <= count; r++) {
        if (dp[r] == NONE) {
          continue;
        }
        for (int x = lo[g]; x <= hi[g] && r + x <= count; x++) {
          var value = dp[r] + value(g, x);
          if (value > next[r + x]) {
            next[r + x] = value;
          }
        }
      }
      dp = next;
    }
    return dp[count];
  }

  /** Set score first, remaining score second, packed into one comparable number. */
  private long value(int g, int x) {
    var left = freeInGroup[g] - x;
    return ((bonus[g] * pairs(x)) << SHIFT) + bonus[g] * pairs(left);
  }

  private static long pairs(long n) {
    return n * (n - 1) / 2;
  }
}
