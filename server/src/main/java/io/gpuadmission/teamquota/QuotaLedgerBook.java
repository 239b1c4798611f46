package io.gpuadmission.teamquota;

import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.QuotaAmounts;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.preemption.PodFacts;
import io.gpuadmission.quota.QuotaBook;
import io.gpuadmission.quota.QuotaPod;
import io.gpuadmission.quota.QuotaResources;
import io.gpuadmission.quota.QuotaTree;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The quota book of the ledger: every claim (bound, assumed, reserved, planned for a gang member,
 * chosen) counted on its namespace's leaf and that leaf's ancestors, in the resources the tree names
 * ({@link QuotaAmounts}). A pod's priority, start and gang come from the pod informer's facts.
 * Rebuilt only when the ledger, the tree or the policy changes: filter asks it for every pod.
 */
public final class QuotaLedgerBook {
  private final GpuLedger ledger;
  private final Supplier<GpuPolicy> policies;
  private final Function<String, Optional<PodFacts>> facts;
  private volatile Cached cached;

  private record Cached(long generation, QuotaTree tree, GpuPolicy policy, Map<String, QuotaPod> pods, QuotaBook book) {}

  public QuotaLedgerBook(GpuLedger ledger, Supplier<GpuPolicy> policies, Function<String, Optional<PodFacts>> facts) {
    this.ledger = ledger;
    this.policies = policies;
    this.facts = facts;
  }

  /** The usage of every pod the ledger holds GPUs for. */
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
    var generation = ledger.generation();
    var policy = policies.get();
    var now = cached;
    if (now != null && now.generation() == generation && now.tree() == tree && now.policy() == policy) {
      return now;
    }
    var names = names(tree);
    var pods = new LinkedHashMap<String, QuotaPod>();
    for (var claim : ledger.claims().values()) {
      var slash = claim.pod().indexOf('/');
      if (slash <= 0) {
        continue; // not a pod's claim
      }
      var namespace = claim.pod().substring(0, slash);
      var known = facts.apply(claim.podUid());
      var started = known.map(PodFacts::started).filter(at -> !at.equals(Instant.MAX)).map(Instant::toEpochMilli).orElse(Long.MAX_VALUE);
      pods.put(claim.podUid(), new QuotaPod(claim.podUid(), namespace, QuotaAmounts.named(QuotaAmounts.of(claim, policy), names),
          known.map(PodFacts::priority).orElse(0), started, known.flatMap(PodFacts::gang)));
    }
    var built = new Cached(generation, tree, policy, Map.copyOf(pods), QuotaBook.of(tree, pods.values()));
    cached = built;
    return built;
  }
}
