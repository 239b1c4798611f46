package io.gpuadmission.gang;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.PlacementDecider.FilterResult;
import io.gpuadmission.placement.PlacementDecider.NodeScore;
import io.gpuadmission.policy.GpuPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The extender's filter and prioritize for gang members, on any replica: a planned member passes
 * exactly its planned node; a member of a gang that is not planned passes none, with the gang's
 * reason, as unresolvable (evicting pods for one member of an incomplete or unplanned gang would
 * gain nothing, so kube-scheduler must not preempt for it).
 */
public final class GangGate {
  private final GangRegistry registry;
  private final GangPlanning planning;
  private final Supplier<GpuPolicy> policies;
  private final Duration planTimeout;

  public GangGate(GangRegistry registry, GangPlanning planning, Supplier<GpuPolicy> policies, Duration planTimeout) {
    this.registry = registry;
    this.planning = planning;
    this.policies = policies;
    this.planTimeout = planTimeout;
  }

  /** The answer for a gang member; empty for any other pod (the ordinary filter answers it). */
  public Optional<FilterResult> filter(Pod pod, List<String> nodes) {
    var member = GangMember.of(pod, policies.get());
    if (member.isEmpty()) {
      return Optional.empty();
    }
    var m = member.get();
    if (m.plan().isPresent()) {
      var plan = m.plan().get();
      if (nodes.contains(plan.node())) {
        return Optional.of(new FilterResult(List.of(plan.node()), Map.of(), others(nodes, plan.node(), GangReasons.plannedElsewhere(m.gang(), plan))));
      }
      return Optional.of(refuseAll(nodes, GangReasons.plannedNodeRefused(m.gang(), plan, planTimeout)));
    }
    return Optional.of(refuseAll(nodes, reason(m)));
  }

  /** A planned member's node scores the most, every other node nothing; empty for any other pod. */
  public Optional<List<NodeScore>> prioritize(Pod pod, List<String> nodes) {
    var member = GangMember.of(pod, policies.get());
    if (member.isEmpty()) {
      return Optional.empty();
    }
    var planned = member.get().plan().map(p -> p.node()).orElse(null);
    var scores = new ArrayList<NodeScore>(nodes.size());
    for (var node : nodes) {
      scores.add(new NodeScore(node, node.equals(planned) ? PlacementDecider.MAX_SCORE : 0));
    }
    return Optional.of(scores);
  }

  /** Why an unplanned member waits: the gang's status, or whether it fits now. */
  String reason(GangMember member) {
    var status = registry.status(member.gang(), Optional.of(member));
    if (status instanceof GangStatus.Disagreeing d) {
      return GangReasons.disagreeing(member.gang(), d);
    }
    if (status instanceof GangStatus.Waiting w) {
      return GangReasons.waiting(member.gang(), w);
    }
    var complete = (GangStatus.Complete) status;
    return planning.plan(member.gang(), complete) instanceof GangPlanning.Outcome.NoRoom noRoom
        ? GangReasons.noRoom(member.gang(), complete, noRoom)
        : GangReasons.awaitingPlan(member.gang(), complete);
  }

  private static FilterResult refuseAll(List<String> nodes, String reason) {
    return new FilterResult(List.of(), Map.of(), others(nodes, null, reason));
  }

  private static Map<String, String> others(List<String> nodes, String except, String reason) {
    var out = new LinkedHashMap<String, String>();
    for (var node : nodes) {
      if (!node.equals(except)) {
        out.put(node, reason);
      }
    }
    return out;
  }
}
