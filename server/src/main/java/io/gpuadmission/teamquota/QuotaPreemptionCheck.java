package io.gpuadmission.teamquota;

import io.gpuadmission.placement.QuotaAmounts;
import io.gpuadmission.preemption.PreemptionSearch;
import io.gpuadmission.preemption.VictimQuota;
import io.gpuadmission.quota.PreemptionUnderQuota;
import io.gpuadmission.quota.QuotaPod;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Priority preemption under the tree in force ({@link PreemptionUnderQuota}), counted on the ledger
 * as the gate counts: the victims' GPUs from the quota book, the preemptor's ask in the tree's
 * resources; nothing while quota reclaim is making room for the preemptor. Without a tree, or
 * with quotas off, every victim may go.
 */
final class QuotaPreemptionCheck implements VictimQuota {
  private final QuotaGate gate;
  private final QuotaLedgerBook books;
  private final QuotaReclaimer reclaimer;

  QuotaPreemptionCheck(QuotaGate gate, QuotaLedgerBook books, QuotaReclaimer reclaimer) {
    this.gate = gate;
    this.books = books;
    this.reclaimer = reclaimer;
  }

  @Override
  public Check forPreemptor(PreemptionSearch.Preemptor preemptor) {
    var tree = gate.tree();
    if (tree.isEmpty()) {
      return victims -> Optional.empty();
    }
    if (reclaimer.makingRoomFor(preemptor.uid())) {
      // Reclaim has evicted for this pod, or is about to: priority preemption evicts nobody more.
      return victims -> Optional.of("quota reclaim is making room for " + preemptor.pod());
    }
    var counted = books.pods(tree.get());
    var book = books.bookWithout(tree.get(), List.of(preemptor.uid()));
    var ask = QuotaLedgerBook.inTree(tree.get(), QuotaAmounts.of(preemptor.ask(), gate.policy()));
    return victimUids -> {
      var victims = new ArrayList<QuotaPod>();
      for (var uid : victimUids) {
        var pod = counted.get(uid);
        if (pod != null && !uid.equals(preemptor.uid())) {
          victims.add(pod); // a pod the book does not count (no GPU) changes no quota
        }
      }
      return victims.isEmpty() ? Optional.empty() : PreemptionUnderQuota.refusal(book, preemptor.namespace(), ask, victims);
    };
  }
}
