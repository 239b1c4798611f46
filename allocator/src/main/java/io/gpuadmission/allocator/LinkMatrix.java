package io.gpuadmission.allocator;

import java.util.Arrays;
import java.util.Objects;

/**
 * Links between every pair of a node's GPUs, and each GPU's NUMA group (GPUs of one group share a
 * CPU socket/affinity; -1 when unknown). Immutable; pair scores are precomputed.
 */
public final class LinkMatrix {
  /**
   * Added to a pair on one NUMA node. nvidia-smi hides the PCIe path of NVLink pairs and labels
   * some same-socket PCIe pairs SYS; the affinity columns still tell near from far. Smaller than
   * any gap between link levels, so it only breaks ties.
   */
  public static final int SAME_NUMA_POINTS = 5;

  private static final Link SELF = new Link(0, PcieLevel.UNKNOWN);

  private final Link[][] links;
  private final int[][] scores;
  private final int[] numa;
  private final int[][] groupScores;
  private final int unknownGroup;

  private LinkMatrix(Link[][] links, int[] numa) {
    this.links = links;
    this.numa = numa;
    this.scores = new int[links.length][links.length];
    for (int i = 0; i < links.length; i++) {
      for (int j = 0; j < links.length; j++) {
        scores[i][j] = i == j ? 0 : links[i][j].score() + (numa[i] >= 0 && numa[i] == numa[j] ? SAME_NUMA_POINTS : 0);
      }
    }
    this.unknownGroup = Arrays.stream(numa).max().orElse(-1) + 1;
    this.groupScores = computeGroupScores(scores, numa);
  }

  /**
   * A matrix from pair links ({@code links[i][i]} is ignored). Refuses a non-square or asymmetric
   * matrix: an allocator that trusts one crashes or chooses nonsense.
   */
  public static LinkMatrix of(Link[][] links, int[] numa) {
    var n = links.length;
    if (numa.length != n) {
      throw new IllegalArgumentException("NUMA groups for " + numa.length + " GPUs but links for " + n);
    }
    var copy = new Link[n][];
    for (int i = 0; i < n; i++) {
      if (links[i].length != n) {
        throw new IllegalArgumentException("row GPU" + i + " has " + links[i].length + " entries, expected " + n);
      }
      copy[i] = links[i].clone();
      copy[i][i] = SELF;
    }
    for (int i = 0; i < n; i++) {
      for (int j = i + 1; j < n; j++) {
        Objects.requireNonNull(copy[i][j], () -> "no link given between GPUs");
        if (!copy[i][j].equals(copy[j][i])) {
          throw new IllegalArgumentException(
              "asymmetric link matrix: GPU" + i + "->GPU" + j + " is " + copy[i][j] + " but GPU" + j + "->GPU" + i + " is "
                  + copy[j][i]);
        }
      }
    }
    return new LinkMatrix(copy, numa.clone());
  }

  /** NVSwitch board: every pair has {@code nvlinks}; NUMA groups break ties. */
  public static LinkMatrix nvSwitch(int gpus, int nvlinks, int[] numa) {
    var links = new Link[gpus][gpus];
    for (int i = 0; i < gpus; i++) {
      for (int j = 0; j < gpus; j++) {
        links[i][j] = new Link(nvlinks, PcieLevel.UNKNOWN);
      }
    }
    return of(links, numa);
  }

  /** PCIe-only board: GPUs of one NUMA group are {@code NODE} apart, others {@code SYS}. */
  public static LinkMatrix pcieOnly(int[] numa) {
    var links = new Link[numa.length][numa.length];
    for (int i = 0; i < numa.length; i++) {
      for (int j = 0; j < numa.length; j++) {
        links[i][j] = new Link(0, numa[i] == numa[j] ? PcieLevel.NODE : PcieLevel.SYS);
      }
    }
    return of(links, numa);
  }

  /** 8x V100 SXM2 hybrid cube-mesh (DGX-1, Alibaba gn6v), GPUs 0-3 on socket 0, 4-7 on 1. */
  public static LinkMatrix dgx1V100() {
    int[][] nv = {
      {0, 1, 1, 2, 2, 0, 0, 0},
      {1, 0, 2, 1, 0, 2, 0, 0},
      {1, 2, 0, 2, 0, 0, 1, 0},
      {2, 1, 2, 0, 0, 0, 0, 1},
      {2, 0, 0, 0, 0, 1, 1, 2},
      {0, 2, 0, 0, 1, 0, 2, 1},
      {0, 0, 1, 0, 1, 2, 0, 2},
      {0, 0, 0, 1, 2, 1, 2, 0}
    };
    var numa = new int[] {0, 0, 0, 0, 1, 1, 1, 1};
    var links = new Link[8][8];
    for (int i = 0; i < 8; i++) {
      for (int j = 0; j < 8; j++) {
        // As nvidia-smi prints it: NV# for NVLink pairs, SYS for the others.
        links[i][j] = nv[i][j] > 0 ? new Link(nv[i][j], PcieLevel.UNKNOWN) : new Link(0, PcieLevel.SYS);
      }
    }
    return of(links, numa);
  }

  public int size() {
    return links.length;
  }

  public Link link(int i, int j) {
    return links[i][j];
  }

  public int score(int i, int j) {
    return scores[i][j];
  }

  public int numa(int gpu) {
    return numa[gpu];
  }

  /**
   * The score between NUMA groups when every pair's score depends only on its two GPUs' groups
   * (NVSwitch and PCIe-only boards): {@code groupScore[a][b]}; null when it does not (DGX-1).
   * GPUs of one group are then interchangeable, which is what makes 72-GPU domains tractable.
   */
  int[][] groupScores() {
    return groupScores;
  }

  /**
   * The GPU's group for grouped search: its NUMA group, or one extra group for every GPU whose
   * NUMA node is unknown (they are interchangeable too if, and only if, their scores agree, which
   * {@link #groupScores()} checks).
   */
  int group(int gpu) {
    return numa[gpu] >= 0 ? numa[gpu] : unknownGroup;
  }

  private static int[][] computeGroupScores(int[][] scores, int[] numa) {
    var unknown = Arrays.stream(numa).max().orElse(-1) + 1;
    var groups = unknown + (Arrays.stream(numa).anyMatch(g -> g < 0) ? 1 : 0);
    var table = new int[groups][groups];
    for (var row : table) {
      Arrays.fill(row, Integer.MIN_VALUE);
    }
    for (int i = 0; i < numa.length; i++) {
      for (int j = 0; j < numa.length; j++) {
        if (i == j) {
          continue;
        }
        var a = numa[i] >= 0 ? numa[i] : unknown;
        var b = numa[j] >= 0 ? numa[j] : unknown;
        if (table[a][b] != Integer.MIN_VALUE && table[a][b] != scores[i][j]) {
          return null;
        }
        table[a][b] = scores[i][j];
      }
    }
    return table;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LinkMatrix other && Arrays.deepEquals(links, other.links) && Arrays.equals(numa, other.numa);
  }

  @Override
  public int hashCode() {
    return Arrays.deepHashCode(links) * 31 + Arrays.hashCode(numa);
  }
}
