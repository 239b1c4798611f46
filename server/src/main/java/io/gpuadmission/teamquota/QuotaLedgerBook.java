package io.gpuadmission.teamquota;

import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.QuotaAmounts;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.preemption.KnownGpuPods;
import io.gpuadmission.quota.QuotaBook;
import io.gpuadmission.quota.QuotaPod;
import io.gpuadmission.quota.QuotaResources;
import io.gpuadmission.quota.QuotaTree;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * The quota book: every pod that counts ({@link CountedPods}: the ledger's claims, and bound GPU
 * pods it has none for) on its namespace's leaf and that leaf's ancestors, in the resources the
 * tree names ({@link QuotaAmounts}). Rebuilt only when the ledger, the pods quota reads, the tree
 * or the policy change: filter asks it for every pod.
 */
public final class QuotaLedgerBook {
  private final GpuLedger ledger;
  private final Supplier<GpuPolicy> policies;
  private final KnownGpuPods pods;
  private volatile Cached cached;

  private record Cached(long generation, long podsGeneration, QuotaTree tree, GpuPolicy policy, Map<String, QuotaPod> pods, QuotaBook book) {}

  public QuotaLedgerBook(GpuLedger ledger, Supplier<GpuPolicy> policies, KnownGpuPods pods) {
    this.ledger = ledger;
    this.policies = policies;
    this.pods = pods;
  }

  /** The usage of every pod that counts. */
  public QuotaBook book(QuotaTree tree) {
    return current(tree).book();
  }

  /** The usage without the pods {@code except} (a pod being placed again must not count against itself). */
  public QuotaBook bookWithout(QuotaTree tree, Collection<String> except) {
    var now = current(tree);
    var book = now.book();
    for (var uid : except) {
      var pod = now.pods().get(uid);
      if (pod != null) {
        book = book.minus(pod);
      }
    }
    return book;
  }

  /** The pods counted, by UID. */
  public Map<String, QuotaPod> pods(QuotaTree tree) {
    return current(tree).pods();
  }

  /** What {@code amounts} are in the resources {@code tree} names. */
  public static QuotaResources inTree(QuotaTree tree, QuotaResources amounts) {
    return QuotaAmounts.named(amounts, names(tree));
  }

  /** Every resource some quota node of {@code tree} names in its min or max. */
  public static Set<String> names(QuotaTree tree) {
    var names = new TreeSet<String>();
    for (var node : tree.nodes()) {
      names.addAll(node.min().names());
      names.addAll(node.max().names());
    }
    return names;
  }

  private Cached current(QuotaTree tree) {
    // Both generations before the reads: a change meanwhile leaves the next call a new key.
    var generation = ledger.generation();
    var podsGeneration = pods.generation();
    var policy = policies.get();
    var now = cached;
    if (now != null && now.generation() == generation && now.podsGeneration() == podsGeneration && now.tree() == tree && now.policy() == policy) {
      return now;
    }
    var counted = CountedPods.of(ledger, pods, policy, names(tree));
    var built = new Cached(generation, podsGeneration, tree, policy, Map.copyOf(counted), QuotaBook.of(tree, counted.values()));
    cached = built;
    return built;
  }
}
