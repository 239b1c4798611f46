package io.gpuadmission.allocator;

import java.util.Optional;

/**
 * Whole GPUs that are all NVLink-connected: every pair of the chosen set has a direct NVLink (no
 * hop through a third GPU or over PCIe), as a job whose collectives must stay on NVLink needs.
 * Among such sets, the same order as {@link TopologyAwareStrategy}: highest pair-score sum, then
 * the best-connected free GPUs left, then the lowest indices. A single GPU needs no link. A node
 * without a link matrix cannot show any NVLink, so it serves no set of two or more.
 *
 * <p>When every pair of free GPUs is NVLink-connected (NVSwitch boards) any set qualifies and the
 * wrapped strategy chooses; otherwise the NVLink cliques are enumerated, which stays small on the
 * sparse boards where that happens (hybrid cube-mesh, NVLink-bridge pairs).
 */
public final class NvLinkStrategy implements WholeGpuStrategy {
  private final WholeGpuStrategy unrestricted;

  public NvLinkStrategy(WholeGpuStrategy unrestricted) {
    this.unrestricted = unrestricted;
  }

  @Override
  public Optional<GpuChoice> choose(NodeGpus node, int count) {
    if (count <= 1) {
      return unrestricted.choose(node, count);
    }
    if (node.links().isEmpty()) {
      return Optional.empty();
    }
    var links = node.links().get();
    var free = node.gpus().stream().filter(GpuDevice::wholeFree).mapToInt(GpuDevice::index).toArray();
    if (allLinked(links, free)) {
      return unrestricted.choose(node, count);
    }
    var search = new Cliques(links, free, count);
    search.extend(0, 0, 0);
    return search.best == null ? Optional.empty() : Optional.of(TopologyAwareStrategy.scored(links, free, search.best));
  }

  /** The most wholly free GPUs that are all NVLink-connected; empty without a link matrix. */
  public static Optional<Integer> largestFreeSet(NodeGpus node) {
    return largest(node, node.gpus().stream().filter(GpuDevice::wholeFree).mapToInt(GpuDevice::index).toArray());
  }

  /** The most healthy GPUs, used or not, that are all NVLink-connected (what freeing them could give). */
  public static Optional<Integer> largestHealthySet(NodeGpus node) {
    return largest(node, node.gpus().stream().filter(GpuDevice::healthy).mapToInt(GpuDevice::index).toArray());
  }

  private static Optional<Integer> largest(NodeGpus node, int[] gpus) {
    if (node.links().isEmpty()) {
      return Optional.empty();
    }
    var links = node.links().get();
    for (int size = gpus.length; size > 1; size--) {
      var search = new Cliques(links, gpus, size);
      search.firstOnly = true;
      search.extend(0, 0, 0);
      if (search.best != null) {
        return Optional.of(size);
      }
    }
    return Optional.of(Math.min(gpus.length, 1));
  }

  private static boolean allLinked(LinkMatrix links, int[] gpus) {
    for (int a = 0; a < gpus.length; a++) {
      for (int b = a + 1; b < gpus.length; b++) {
        if (links.link(gpus[a], gpus[b]).nvlinks() == 0) {
          return false;
        }
      }
    }
    return true;
  }

  /** Sets of {@code count} GPUs of {@code gpus}, pairwise NVLinked, in lexicographic order. */
  private static final class Cliques {
    private final LinkMatrix links;
    private final int[] gpus;
    private final int[] current;
    private int[] best;
    private long bestSet = Long.MIN_VALUE;
    private long bestRest = Long.MIN_VALUE;
    private boolean firstOnly;

    Cliques(LinkMatrix links, int[] gpus, int count) {
      this.links = links;
      this.gpus = gpus;
      this.current = new int[count];
    }

    void extend(int from, int depth, long setScore) {
      if (firstOnly && best != null) {
        return;
      }
      if (depth == current.length) {
        var choice = TopologyAwareStrategy.scored(links, gpus, current);
        if (setScore > bestSet || (setScore == bestSet && choice.remainingScore() > bestRest)) {
          bestSet = setScore;
          bestRest = choice.remainingScore();
          best = current.clone();
        }
        return;
      }
      for (int a = from; a <= gpus.length - (current.length - depth); a++) {
        var g = gpus[a];
        long added = 0;
        var linked = true;
        for (int d = 0; d < depth && linked; d++) {
          linked = links.link(g, current[d]).nvlinks() > 0;
          added += links.score(g, current[d]);
        }
        if (linked) {
          current[depth] = g;
          extend(a + 1, depth + 1, setScore + added);
        }
      }
    }
  }
}
