package io.gpuadmission.teamquota;

import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.QuotaAmounts;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.quota.QuotaAdmission;
import io.gpuadmission.quota.QuotaDecision;
import io.gpuadmission.quota.QuotaTree;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Team quotas at placement: whether a pod (or a gang, whole) may be placed as far as the quota tree
 * in force goes, counted on the ledger. Without a tree, or with policy {@code quotas.enabled:
 * false}, every pod passes.
 */
public final class QuotaGate {
  private final Supplier<Optional<QuotaTree>> trees;
  private final Supplier<GpuPolicy> policies;
  private final QuotaLedgerBook books;

  public QuotaGate(Supplier<Optional<QuotaTree>> trees, Supplier<GpuPolicy> policies, QuotaLedgerBook books) {
    this.trees = trees;
    this.policies = policies;
    this.books = books;
  }

  /** A gate without a tree: every pod passes (a service built by hand, as tests and the command line build it). */
  public static QuotaGate none(Supplier<GpuPolicy> policies) {
    return new QuotaGate(Optional::empty, policies, null);
  }

  /** The tree quotas are enforced by now; empty without one or when the policy turns quotas off. */
  public Optional<QuotaTree> tree() {
    return policies.get().quotas().enabled() ? trees.get() : Optional.empty();
  }

  /** The policy in force. */
  GpuPolicy policy() {
    return policies.get();
  }

  /** Why a pod of {@code namespace} (UID {@code uid}) asking {@code ask} may not be placed now; empty when it may. */
  public Optional<QuotaDecision.Refused> refusal(String namespace, String uid, GpuAsk ask) {
    if (ask.kind() == GpuAsk.Kind.NONE) {
      return Optional.empty();
    }
    return decide(namespace, List.of(uid), ask, 1);
  }

  /**
   * Why a gang's {@code members} pending members of {@code namespace}, each asking {@code each}, may
   * not be placed now: they are admitted together or not at all. {@code uids}: those members, whose
   * own planned GPUs must not count against them.
   */
  public Optional<QuotaDecision.Refused> gangRefusal(String namespace, Collection<String> uids, GpuAsk each, int members) {
    return decide(namespace, uids, each, members);
  }

  private Optional<QuotaDecision.Refused> decide(String namespace, Collection<String> uids, GpuAsk each, int members) {
    var tree = tree();
    if (tree.isEmpty() || tree.get().leafOf(namespace).isEmpty()) {
      return Optional.empty();
    }
    var policy = policies.get();
    var one = QuotaLedgerBook.inTree(tree.get(), QuotaAmounts.of(each, policy));
    var asks = java.util.Collections.nCopies(members, one);
    var decision = QuotaAdmission.admitGang(books.bookWithout(tree.get(), uids), namespace, asks);
    return decision instanceof QuotaDecision.Refused refused ? Optional.of(refused) : Optional.empty();
  }
}
