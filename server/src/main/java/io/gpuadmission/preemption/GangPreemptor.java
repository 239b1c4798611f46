package io.gpuadmission.preemption;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.gang.GangCoordinator;
import io.gpuadmission.gang.GangKey;
import io.gpuadmission.gang.GangPlanning;
import io.gpuadmission.gang.GangStatus;
import io.gpuadmission.contract.GpuAnnotations;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.PlacementDecider.MemberPlace;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * Preemption for a complete gang (topology job) that does not fit, as one unit: kube-scheduler
 * cannot do it (a gang's members are refused as unresolvable until their plan exists, and it
 * preempts pod by pod). The gang's priority is its least important pending member's. The gang is
 * planned as if every pod of lower priority were gone (a lower gang only whole, wherever its
 * members run); the victims are the pods on the GPUs of that plan, each lower gang among them with
 * all its members. They are marked and deleted as kube-scheduler's preemption does, every pending
 * member is nominated to its node of that plan, and the gang is planned as usual once the victims
 * are gone (the nominations hold those GPUs against pods of lower priority meanwhile). While a
 * member's nominated node still has victims terminating, nothing more is preempted for the gang.
 * No plan even without every pod of lower priority: nothing is evicted, and the gang waits.
 */
public final class GangPreemptor implements GangCoordinator.GangPreemption {
  private static final Logger LOG = Logger.getLogger(GangPreemptor.class);

  private final KubernetesClient client;
  private final GpuPreemptor evictions;
  private final GangPlanning planning;
  private final GpuLedger ledger;
  private final PodFactsIndex pods;
  private final PreemptionMetrics metrics;

  public GangPreemptor(
      KubernetesClient client, GpuPreemptor evictions, GangPlanning planning, GpuLedger ledger, PodFactsIndex pods, PreemptionMetrics metrics) {
    this.client = client;
    this.evictions = evictions;
    this.planning = planning;
    this.ledger = ledger;
    this.pods = pods;
    this.metrics = metrics;
  }

  @Override
  public boolean preempt(GangKey gang, GangStatus.Complete complete) {
    var members = new ArrayList<Pod>();
    var priority = Integer.MAX_VALUE;
    for (var member : complete.unbound()) {
      var pod = client.pods().inNamespace(member.namespace()).withName(member.name()).get();
      if (pod == null || !member.uid().equals(pod.getMetadata().getUid()) || pod.getMetadata().getDeletionTimestamp() != null
          || PreemptionRules.neverPreempts(pod)) {
        return false; // a member going or one that never preempts: the gang waits for room
      }
      if (PreemptionRules.victimsTerminating(pod, pods, ledger)) {
        return true; // its victims are still terminating
      }
      members.add(pod);
      priority = Math.min(priority, PodFacts.priority(pod));
    }
    var removable = removable(priority);
    var outcome = planning.planOver(gang, complete, node -> ledger.view(node).map(v -> PreemptionSearch.without(v, removable.getOrDefault(node, List.of()))));
    if (!(outcome instanceof GangPlanning.Outcome.Planned planned)) {
      return false;
    }
    var victims = victims(planned.places(), removable);
    if (victims.isEmpty()) {
      return false; // it fits as things are: the next pass plans it
    }
    var first = members.get(0);
    var scheduler = first.getSpec() == null || first.getSpec().getSchedulerName() == null ? "default-scheduler" : first.getSpec().getSchedulerName();
    var names = new ArrayList<String>();
    var ordered = new ArrayList<>(victims.values());
    ordered.sort(java.util.Comparator.comparing(PodFacts::pod));
    for (var victim : ordered) {
      names.add(victim.pod());
      if (!victim.terminating()) {
        evictions.evict(victim, first, scheduler, victim.node());
      }
    }
    var places = new ArrayList<String>();
    for (var member : complete.unbound()) {
      var place = planned.byMember().get(member.uid());
      places.add(place.node() + " GPUs " + GpuAnnotations.join(place.gpus()));
    }
    for (var pod : members) {
      var place = planned.byMember().get(pod.getMetadata().getUid());
      evictions.nominate(pod, place.node());
      for (var lower : pods.nominatedBelow(place.node(), priority)) {
        evictions.clearNomination(lower.namespace(), lower.name(), lower.uid());
      }
    }
    var message = gang.quoted() + " preempted " + String.join(", ", names) + " to free " + String.join(", ", places)
        + "; each member is nominated to its node, and the gang is planned there once they are gone";
    members.forEach(pod -> evictions.publish(pod, "Normal", "Preempting", message));
    metrics.record("preempted");
    metrics.victims(names.size());
    LOG.infof("%s (priority %d, placement leader)", message, priority);
    return true;
  }

  /**
   * The claims the gang may take away, by node: pods of lower priority (bound, or being bound), a
   * member of another gang only when all its placed members have lower priority.
   */
  private Map<String, List<GpuClaim>> removable(int priority) {
    var out = new HashMap<String, List<GpuClaim>>();
    for (var claim : ledger.claims().values()) {
      if (claim.forPendingPod()) {
        continue;
      }
      var facts = pods.facts(claim.podUid());
      if (facts.isEmpty() || facts.get().priority() >= priority) {
        continue;
      }
      var other = facts.get().gang();
      if (other.isPresent() && pods.gang(other.get()).stream().anyMatch(m -> m.priority() >= priority
          || ledger.claim(m.uid()).filter(c -> c.phase() == GpuClaim.Phase.PLANNED).isPresent())) {
        continue;
      }
      out.computeIfAbsent(claim.node(), n -> new ArrayList<>()).add(claim);
    }
    return out;
  }

  /** The pods on the planned GPUs, and every member of a gang among them, by UID in the order found. */
  private Map<String, PodFacts> victims(List<MemberPlace> places, Map<String, List<GpuClaim>> removable) {
    var out = new LinkedHashMap<String, PodFacts>();
    for (var place : places) {
      for (var claim : removable.getOrDefault(place.node(), List.of())) {
        if (claim.gpus().stream().noneMatch(place.gpus()::contains)) {
          continue;
        }
        var facts = pods.facts(claim.podUid()).orElseThrow();
        var unit = facts.gang().map(pods::gang).orElse(List.of(facts));
        for (var pod : unit) {
          if (ledger.claim(pod.uid()).isPresent()) {
            out.putIfAbsent(pod.uid(), pod);
          }
        }
      }
    }
    return out;
  }
}
