package io.gpuadmission.preemption;

import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.PlacementDecider;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Victims for a pod on one node, read from the GPU ledger (which pod holds which GPU) and the
 * {@link PodFactsIndex} (priority, start, gang, nominations): the pods that may be evicted are the
 * ones of lower priority than the pod (kube-scheduler's rule: never equal or higher) that are not
 * already terminating, each on its own or, for a gang, all its placed members together when they
 * are all on this node (a gang with a member elsewhere, or one of equal or higher priority, is never
 * a victim). Pods nominated to the node with no lower priority keep the GPUs they would take.
 * {@link VictimChooser} picks among them.
 */
public final class PreemptionSearch {
  private final GpuLedger ledger;
  private final PodFactsIndex pods;
  private final PlacementDecider decider;
  private final DisruptionBudgets budgets;

  /** The pod that needs room: its UID, {@code ns/name}, priority and GPU ask. */
  public record Preemptor(String uid, String pod, int priority, GpuAsk ask) {}

  public PreemptionSearch(GpuLedger ledger, PodFactsIndex pods, PlacementDecider decider, DisruptionBudgets budgets) {
    this.ledger = ledger;
    this.pods = pods;
    this.decider = decider;
    this.budgets = budgets;
  }

  /**
   * The pods to evict on {@code node} beside {@code alreadyGoing} (victims kube-scheduler chose
   * for its own resources; a gang member among them brings the rest of its gang, or the node is
   * refused); empty when no set makes room, when {@code alreadyGoing} breaks a gang it cannot take
   * whole, or names a pod of equal or higher priority.
   */
  public Optional<NodeVictims> onNode(Preemptor preemptor, String node, Set<String> alreadyGoing) {
    var view = ledger.view(node);
    if (view.isEmpty()) {
      return Optional.empty();
    }
    var claims = new ArrayList<>(ledger.claimsOn(node));
    // Pods nominated here of no lower priority keep their GPUs, as in kube-scheduler's dry run.
    claims.addAll(decider.heldClaims(node, view.get(), pods.heldOn(node, preemptor.priority(), preemptor.uid())));
    var gone = new HashSet<>(alreadyGoing);
    var withGoing = new ArrayList<Victim>();
    for (var uid : alreadyGoing) {
      if (pods.facts(uid).filter(f -> f.priority() >= preemptor.priority() && !f.uid().equals(preemptor.uid())).isPresent()) {
        return Optional.empty(); // never a pod of equal or higher priority, whoever names it
      }
      var gang = pods.facts(uid).flatMap(PodFacts::gang);
      if (gang.isEmpty()) {
        continue;
      }
      var unit = gangUnit(preemptor, node, gang.get());
      if (unit.isEmpty()) {
        return Optional.empty();
      }
      for (var member : unit.get().pods()) {
        if (gone.add(member.uid())) {
          withGoing.add(member);
        }
      }
    }
    var units = units(preemptor, node, claims, gone);
    return VictimChooser.choose(
            view.get(), claims, gone, units, preemptor.ask(), v -> decider.refusal(preemptor.ask(), v).isEmpty(), budgets)
        .map(chosen -> withGoing.isEmpty() ? chosen : prepend(withGoing, chosen));
  }

  /** Every pod on the node that may be evicted for the preemptor, gangs as one unit each. */
  private List<VictimUnit> units(Preemptor preemptor, String node, List<GpuClaim> claims, Set<String> gone) {
    var units = new ArrayList<VictimUnit>();
    var gangs = new LinkedHashMap<String, Boolean>();
    for (var claim : claims) {
      if (gone.contains(claim.podUid()) || claim.phase() == GpuClaim.Phase.PLANNED || claim.podUid().equals(preemptor.uid())) {
        continue;
      }
      var facts = pods.facts(claim.podUid());
      // A terminating pod frees its GPUs for the pod it was evicted for, not for another one.
      if (facts.isEmpty() || facts.get().priority() >= preemptor.priority() || facts.get().terminating()) {
        continue;
      }
      if (facts.get().gang().isPresent()) {
        gangs.putIfAbsent(facts.get().gang().get(), true);
      } else {
        units.add(new VictimUnit(List.of(new Victim(facts.get(), claim))));
      }
    }
    for (var gang : gangs.keySet()) {
      gangUnit(preemptor, node, gang).filter(u -> u.pods().stream().noneMatch(p -> gone.contains(p.uid()))).ifPresent(units::add);
    }
    return units;
  }

  /**
   * All placed members of a gang, when every one of them holds GPUs on this node and has a lower
   * priority than the preemptor; empty otherwise, and while a plan holds GPUs for a member (the
   * gang is being placed).
   */
  private Optional<VictimUnit> gangUnit(Preemptor preemptor, String node, String gang) {
    var members = new ArrayList<Victim>();
    for (var member : pods.gang(gang)) {
      var claim = ledger.claim(member.uid());
      if (claim.isEmpty()) {
        continue;
      }
      if (claim.get().phase() == GpuClaim.Phase.PLANNED || !claim.get().node().equals(node) || member.priority() >= preemptor.priority()
          || member.terminating()) {
        return Optional.empty();
      }
      members.add(new Victim(member, claim.get()));
    }
    return members.isEmpty() ? Optional.empty() : Optional.of(new VictimUnit(members));
  }

  private static NodeVictims prepend(List<Victim> first, NodeVictims chosen) {
    var all = new ArrayList<>(first);
    all.addAll(chosen.victims());
    return new NodeVictims(chosen.node(), all, chosen.pdbViolations(), chosen.gpus());
  }
}
