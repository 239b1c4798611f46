package io.gpuadmission.quota;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;

/**
 * Reclaim: room for a pending pod of a leaf under its min, taken from pods of leaves that borrow.
 *
 * <p>The pending pod qualifies when its leaf's used + ask ≤ min in every resource. A victim set
 * qualifies when, for every leaf it takes from and every resource r the pending pod asks for that
 * it takes: used(leaf) − taken(leaf) ≥ min(leaf) — a victim's leaf keeps at least its min, so a
 * leaf at or under its min is never a victim and no leaf is pushed under its min to lift another
 * to its own (which would only move the wait); and when every node on the pending pod's path stays
 * within max once the victims are gone. A pod of no leaf is never a victim (it borrows from no
 * one). A gang is taken whole: its members on other nodes are evicted too and count.
 *
 * <p>Among the candidate nodes where, per {@link RoomCheck}, the pod fits once a qualifying set is
 * gone: fewest PodDisruptionBudget violations (per {@link DisruptionAllowance}, a preference as in
 * kube-scheduler's preemption, never a veto), then fewest victims, then the lowest highest priority
 * among them, then the lowest sum of priorities, then the youngest (the latest start of the
 * earliest started victim), then the victims' uids, then the node name. Per node the {@value #EXACT_UNITS}
 * cheapest victim units (a pod, or a gang) are searched exhaustively, so "fewest" is exact up to
 * that many; beyond it only those are tried.
 */
public final class ReclaimPlanner {
  /** How many victim units of a node are searched exhaustively (2^12 sets at most). */
  public static final int EXACT_UNITS = 12;

  private ReclaimPlanner() {}

  /** The plan without PodDisruptionBudgets, or empty when the pod does not qualify or no candidate node has a qualifying set. */
  public static Optional<ReclaimPlan> plan(
      QuotaBook book, QuotaPod pending, List<String> candidateNodes, List<RunningPod> running, RoomCheck room) {
    return plan(book, pending, candidateNodes, running, room, DisruptionAllowance.NONE);
  }

  /** The plan, or empty when the pod does not qualify or no candidate node has a qualifying set. */
  public static Optional<ReclaimPlan> plan(
      QuotaBook book, QuotaPod pending, List<String> candidateNodes, List<RunningPod> running, RoomCheck room,
      DisruptionAllowance budgets) {
    var leaf = book.tree().leafOf(pending.namespace());
    if (leaf.isEmpty() || !book.used(leaf.get()).add(pending.ask()).fitsWithin(leaf.get().min())) {
      return Optional.empty();
    }
    var rules = new VictimRules(book, leaf.get(), pending.ask());
    var unitsByNode = new HashMap<String, List<VictimUnit>>();
    for (var unit : units(book, running)) {
      if (rules.helps(unit)) {
        unit.members().stream().map(RunningPod::node).distinct()
            .forEach(node -> unitsByNode.computeIfAbsent(node, n -> new ArrayList<>()).add(unit));
      }
    }
    Candidate best = null;
    for (var node : candidateNodes.stream().sorted().distinct().toList()) {
      var onNode = unitsByNode.getOrDefault(node, List.of()).stream()
          .sorted(VictimUnit.CHEAPEST)
          .limit(EXACT_UNITS)
          .toList();
      best = bestOnNode(node, onNode, rules, room, budgets, best);
    }
    return Optional.ofNullable(best).map(candidate -> candidate.plan(book, leaf.get().name()));
  }

  /**
   * The best qualifying set on {@code node} if better than {@code best}, else {@code best}. First
   * the sets that violate no budget, fewest pods first and each count's sets best first: the first
   * that fits is the node's best (violations rank first), and the search stops at the first no
   * better than {@code best}, as every later one ranks below it. Sets are built a pod count at a
   * time, so a node where one victim makes room costs its single victims only. Only when none of
   * those fits, and {@code best} violates a budget too (or there is none yet), are sets that violate
   * budgets tried, all of them in rank order.
   */
  private static Candidate bestOnNode(
      String node, List<VictimUnit> units, VictimRules rules, RoomCheck room, DisruptionAllowance budgets, Candidate best) {
    for (var sets : VictimSet.byPodCount(units, budgets)) {
      for (var set : sets) {
        if (set.pdbViolations() > 0) {
          break; // the rest of this count violates budgets too
        }
        if (best != null && VictimSet.ORDER.compare(set, best.set()) >= 0) {
          return best;
        }
        if (rules.allows(set) && room.fitsAfterRemoving(node, set.uids())) {
          return new Candidate(node, set);
        }
      }
    }
    if (best != null && best.set().pdbViolations() == 0 || !budgets.countsAny(VictimSet.members(units))) {
      return best;
    }
    for (var sets : VictimSet.inRankOrder(units, budgets)) {
      for (var set : sets) {
        if (best != null && VictimSet.ORDER.compare(set, best.set()) >= 0) {
          return best;
        }
        if (set.pdbViolations() > 0 && rules.allows(set) && room.fitsAfterRemoving(node, set.uids())) {
          return new Candidate(node, set);
        }
      }
    }
    return best;
  }

  private static List<VictimUnit> units(QuotaBook book, List<RunningPod> running) {
    var byKey = new LinkedHashMap<String, List<RunningPod>>();
    for (var pod : running) {
      if (book.tree().leafOf(pod.pod().namespace()).isEmpty()) {
        continue;
      }
      var key = pod.pod().gangKey().map(gang -> "gang " + pod.pod().namespace() + "/" + gang)
          .orElse("pod " + pod.pod().uid());
      byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(pod);
    }
    var units = new ArrayList<VictimUnit>();
    byKey.forEach((key, members) -> units.add(new VictimUnit(key, members)));
    return units;
  }

  private record Candidate(String node, VictimSet set) {
    ReclaimPlan plan(QuotaBook book, String reclaimingQuota) {
      var victims = new ArrayList<ReclaimVictim>();
      for (var unit : set.units()) {
        for (var member : unit.members()) {
          var victimQuota = book.tree().leafOf(member.pod().namespace()).orElseThrow().name();
          victims.add(new ReclaimVictim(member.pod(), member.node(), victimQuota, reclaimingQuota));
        }
      }
      victims.sort(Comparator.comparing(ReclaimVictim::node).thenComparing(victim -> victim.pod().uid()));
      return new ReclaimPlan(node, victims);
    }
  }
}
