package io.gpuadmission.quota;

import java.util.ArrayList;

/**
 * Fairness when several quota nodes borrow: a parent's idle capacity is shared among its children
 * that borrow (or want to) in proportion to their min, each capped at its max (water-filling).
 *
 * <p>Per parent P and resource r: P's pool is P's own limit (the root's: its min, which equals its
 * max); idle = pool − Σ over P's children of min(used, min), the capacity no child uses within its
 * guarantee; the claimants are the children using at least their min (and something), plus the
 * child asking; each gets a share of idle by weight min(child), capped at max(child) − min(child).
 * A child's limit is its min plus its share, never above its max. A borrower above its share keeps
 * its pods (fairness refuses new ones, reclaim is only for a min), so the share governs who gets
 * the next idle GPU, not first come first served.
 *
 * <p>Why proportional to min and not DRF across GPUs and GPU memory: a quota's min is what the
 * platform team promised it, and ACK's own capacity scheduling shares idle capacity by min
 * (Koordinator's runtime quota likewise, by min-based shared weight); resources are shared one by
 * one, so a leaf's share of whole GPUs and of GPU memory follow the same promise. DRF would equalise
 * dominant shares whatever the mins, which answers a different question (equal teams).
 */
final class FairShare {
  private FairShare() {}

  static long limit(QuotaBook book, QuotaNode node, String resource) {
    var parent = node.parent();
    if (parent.isEmpty()) {
      return node.min().has(resource) ? node.min().get(resource) : Long.MAX_VALUE;
    }
    var pool = limit(book, parent.get(), resource);
    var idle = pool;
    var claims = new ArrayList<WaterFill.Claim>();
    for (var sibling : parent.get().children()) {
      var used = book.used(sibling).get(resource);
      var min = sibling.min().get(resource);
      idle = pool == Long.MAX_VALUE ? idle : idle - Math.min(used, min);
      if (sibling == node || (used > 0 && used >= min)) {
        var max = sibling.max().has(resource) ? sibling.max().get(resource) : Long.MAX_VALUE;
        claims.add(new WaterFill.Claim(sibling.name(), min, max - min));
      }
    }
    var max = node.max().has(resource) ? node.max().get(resource) : Long.MAX_VALUE;
    if (pool == Long.MAX_VALUE) {
      return max;
    }
    var share = WaterFill.share(Math.max(0, idle), claims).get(node.name());
    return Math.min(max, node.min().get(resource) + share);
  }
}
