package io.gpuadmission.preemption;

import io.gpuadmission.allocator.GpuDevice;
import io.gpuadmission.allocator.NodeGpus;
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
 * not a gang member, each on its own or, for a gang, all its placed members together when they
 * are all on this node (a gang with a member elsewhere, or one of equal or higher priority, is never
 * a victim). As in kube-scheduler's dry run, a pod of lower priority that is already terminating is
 * a victim like any other (it costs no eviction: {@link NodeVictims#BETTER_FIRST} does not count
 * it), and pods nominated to the node with no lower priority keep the GPUs they will take once
 * those terminating pods are gone ({@code RunFilterPluginsWithNominatedPods} on the node with the
 * lower-priority pods removed). So a GPU a terminating victim frees, less what the pods nominated
 * to it take, is room for the next preemptor. {@link VictimChooser} picks among them.
 */
public final class PreemptionSearch {
  private final GpuLedger ledger;
  private final PodFactsIndex pods;
  private final PlacementDecider decider;
  private final DisruptionBudgets budgets;
  private final VictimQuota quota;

  /** The pod that needs room: its UID, {@code ns/name}, priority and GPU ask. */
  public record Preemptor(String uid, String pod, int priority, GpuAsk ask) {
    /** The pod's namespace. */
    public String namespace() {
      var slash = pod.indexOf('/');
      return slash < 0 ? "" : pod.substring(0, slash);
    }
  }

  /** A search that weighs priorities alone (no team quotas). */
  public PreemptionSearch(GpuLedger ledger, PodFactsIndex pods, PlacementDecider decider, DisruptionBudgets budgets) {
    this(ledger, pods, decider, budgets, VictimQuota.NONE);
  }

  public PreemptionSearch(GpuLedger ledger, PodFactsIndex pods, PlacementDecider decider, DisruptionBudgets budgets, VictimQuota quota) {
    this.ledger = ledger;
    this.pods = pods;
    this.decider = decider;
    this.budgets = budgets;
    this.quota = quota;
  }

  /**
   * The pods to evict on {@code node} beside {@code alreadyGoing} (victims kube-scheduler chose
   * for its own resources; a gang member among them brings the rest of its gang, or the node is
   * refused); empty when no set makes room, when {@code alreadyGoing} breaks a gang it cannot take
   * whole, or names a pod of equal or higher priority, and when the victims break a team quota
   * ({@link VictimQuota}: kube-scheduler's own victims too, chosen by priority alone).
   */
  public Optional<NodeVictims> onNode(Preemptor preemptor, String node, Set<String> alreadyGoing) {
    var view = ledger.view(node);
    if (view.isEmpty()) {
      return Optional.empty();
    }
    var claims = new ArrayList<>(ledger.claimsOn(node));
    // Pods nominated here of no lower priority keep their GPUs, as in kube-scheduler's dry run:
    // placed where they go once the pods terminating for them have gone.
    var freed = without(view.get(), terminatingBelow(preemptor, claims));
    claims.addAll(decider.heldClaims(node, freed, pods.heldOn(node, preemptor.priority(), preemptor.uid())));
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
    var quotas = quota.forPreemptor(preemptor);
    if (quotas.refusal(gone).isPresent()) {
      return Optional.empty();
    }
    var units = units(preemptor, node, claims, gone).stream().filter(unit -> quotas.refusal(with(gone, unit.pods())).isEmpty()).toList();
    return VictimChooser.choose(
            view.get(), claims, gone, units, preemptor.ask(), v -> decider.refusal(preemptor.ask(), v).isEmpty(), budgets)
        // Each unit keeps the quotas on its own; together they may not (two from one team's borrowing).
        .filter(chosen -> chosen.victims().isEmpty() || quotas.refusal(with(gone, chosen.victims())).isEmpty())
        .map(chosen -> withGoing.isEmpty() ? chosen : prepend(withGoing, chosen));
  }

  /** {@code gone} and the victims' UIDs. */
  private static Set<String> with(Set<String> gone, List<Victim> victims) {
    var all = new HashSet<>(gone);
    victims.forEach(v -> all.add(v.uid()));
    return all;
  }

  /** Every pod on the node that may be evicted for the preemptor, gangs as one unit each. */
  private List<VictimUnit> units(Preemptor preemptor, String node, List<GpuClaim> claims, Set<String> gone) {
    var units = new ArrayList<VictimUnit>();
    var gangs = new LinkedHashMap<String, Boolean>();
    for (var claim : claims) {
      if (gone.contains(claim.podUid()) || claim.forPendingPod() || claim.podUid().equals(preemptor.uid())) {
        continue;
      }
      var facts = pods.facts(claim.podUid());
      if (facts.isEmpty() || facts.get().priority() >= preemptor.priority()) {
        continue;
      }
      if (facts.get().terminating()) {
        // Going anyway (a gang's members each on their own): the pods it was evicted for are
        // nominated here and hold what they take of its GPUs; the rest is room.
        units.add(new VictimUnit(List.of(new Victim(facts.get(), claim))));
      } else if (facts.get().gang().isPresent()) {
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

  /** Claims of pods of lower priority than the preemptor that are terminating already. */
  private List<GpuClaim> terminatingBelow(Preemptor preemptor, List<GpuClaim> claims) {
    var out = new ArrayList<GpuClaim>();
    for (var claim : claims) {
      var facts = pods.facts(claim.podUid());
      if (!claim.forPendingPod() && facts.isPresent() && facts.get().terminating()
          && facts.get().priority() < preemptor.priority()) {
        out.add(claim);
      }
    }
    return out;
  }

  /** The node's GPUs with {@code gone} taken off them. */
  public static NodeGpus without(NodeGpus view, List<GpuClaim> gone) {
    if (gone.isEmpty()) {
      return view;
    }
    var used = new long[view.gpus().size()];
    for (int g = 0; g < used.length; g++) {
      used[g] = view.gpus().get(g).used();
    }
    for (var claim : gone) {
      for (var g : claim.gpus()) {
        if (g >= 0 && g < used.length) {
          used[g] -= claim.whole() ? view.gpus().get(g).capacity() : claim.memory();
        }
      }
    }
    var gpus = new ArrayList<GpuDevice>(used.length);
    for (int g = 0; g < used.length; g++) {
      gpus.add(view.gpus().get(g).withUsed(Math.max(0, used[g])));
    }
    return new NodeGpus(view.name(), gpus, view.links(), view.cpuCapacity(), view.cpuFree());
  }

  private static NodeVictims prepend(List<Victim> first, NodeVictims chosen) {
    var all = new ArrayList<>(first);
    all.addAll(chosen.victims());
    return new NodeVictims(chosen.node(), all, chosen.pdbViolations(), chosen.gpus());
  }
}
