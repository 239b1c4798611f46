package io.gpuadmission.teamquota;

import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.QuotaAmounts;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.preemption.KnownGpuPods;
import io.gpuadmission.preemption.PodFacts;
import io.gpuadmission.quota.QuotaPod;
import io.gpuadmission.quota.QuotaResources;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The pods a team's usage counts, as quota sees them: every claim of the ledger (bound, assumed,
 * reserved, planned for a gang member, chosen) by what it holds, every bound pod asking GPUs that
 * the ledger holds nothing for (bound by another scheduler, or before the install, on a node
 * without the node agent) by what it asks, and every pending pod reclaim holds room for, by what it
 * asks. A pod counts once; any other pending pod without a claim counts nothing. A pod being
 * deleted counts nothing either: its team's usage lets it go at once, as kube-scheduler's
 * preemption counts a terminating pod gone, while its GPUs stay taken on its node until the ledger
 * lets them go (so a reclaim waiting for its victims is not refused by the quota they still held).
 * Priority, start and gang come from the pod informer's facts, for both.
 */
final class CountedPods {
  private CountedPods() {}

  /** By UID, amounts in {@code names} (the tree's resources). */
  static Map<String, QuotaPod> of(GpuLedger ledger, KnownGpuPods pods, GpuPolicy policy, Set<String> names) {
    var counted = new LinkedHashMap<String, QuotaPod>();
    var claims = ledger.claims();
    for (var claim : claims.values()) {
      var slash = claim.pod().indexOf('/');
      var known = pods.facts(claim.podUid());
      if (slash <= 0 || known.filter(PodFacts::terminating).isPresent()) {
        continue; // not a pod's claim, or the pod is going
      }
      counted.put(claim.podUid(), pod(claim.podUid(), claim.pod().substring(0, slash), QuotaAmounts.of(claim, policy), known, names));
    }
    for (var facts : pods.bound()) {
      if (!claims.containsKey(facts.uid()) && !facts.terminating()) {
        counted.put(facts.uid(), pod(facts.uid(), facts.namespace(), QuotaAmounts.of(facts.ask(), policy), Optional.of(facts), names));
      }
    }
    for (var facts : pods.held()) {
      counted.putIfAbsent(facts.uid(), pod(facts.uid(), facts.namespace(), QuotaAmounts.of(facts.ask(), policy), Optional.of(facts), names));
    }
    return counted;
  }

  private static QuotaPod pod(String uid, String namespace, QuotaResources amounts, Optional<PodFacts> known, Set<String> names) {
    var started = known.map(PodFacts::started).filter(at -> !at.equals(Instant.MAX)).map(Instant::toEpochMilli).orElse(Long.MAX_VALUE);
    return new QuotaPod(uid, namespace, QuotaAmounts.named(amounts, names), known.map(PodFacts::priority).orElse(0), started, known.flatMap(PodFacts::gang));
  }
}
