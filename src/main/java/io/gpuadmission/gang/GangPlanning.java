package io.gpuadmission.gang;

import io.fabric8.kubernetes.api.model.Node;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.PlacementDecider.GangOutcome;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Plans a complete gang's pending members over the nodes they may all run on, with the
 * allocator's gang planner on the ledger as it is now. The leader plans with it; every replica's
 * filter asks it whether the gang fits, to give the same reason (cached until the ledger or the
 * gang changes: a gang's members all ask at once).
 */
public final class GangPlanning {
  private final PlacementDecider decider;
  private final GpuLedger ledger;
  private final Supplier<List<Node>> nodes;
  private final Map<GangKey, Cached> outcomes = new ConcurrentHashMap<>();

  private record Cached(long generation, List<String> members, long madeNanos, GangOutcome outcome) {}

  /** Node labels and taints do not change the ledger's generation: a cached answer lives this long at most. */
  private static final long FRESH_NANOS = 5_000_000_000L;

  public GangPlanning(PlacementDecider decider, GpuLedger ledger, Supplier<List<Node>> nodes) {
    this.decider = decider;
    this.ledger = ledger;
    this.nodes = nodes;
  }

  public GangOutcome plan(GangKey gang, GangStatus.Complete complete) {
    var members = complete.unbound().stream().map(GangMember::uid).toList();
    var generation = ledger.generation();
    var cached = outcomes.get(gang);
    if (cached != null && cached.generation() == generation && cached.members().equals(members)
        && System.nanoTime() - cached.madeNanos() < FRESH_NANOS) {
      return cached.outcome();
    }
    var outcome = decider.planGang(eligible(complete.unbound()), complete.unbound().size(), complete.gpusEach(), complete.perNode(), complete.nvlink());
    outcomes.put(gang, new Cached(generation, members, System.nanoTime(), outcome));
    if (outcomes.size() > 10_000) {
      outcomes.clear(); // gangs come and go; a cache that only grows would hold every gang ever seen
    }
    return outcome;
  }

  /** Nodes with GPUs that every pending member's selector, affinity and tolerations admit, by name. */
  private List<String> eligible(List<GangMember> members) {
    var constraints = new HashSet<NodeConstraints>();
    members.forEach(m -> constraints.add(m.constraints()));
    var out = new ArrayList<String>();
    for (var node : nodes.get()) {
      var name = node.getMetadata().getName();
      if (ledger.view(name).isPresent() && constraints.stream().allMatch(c -> c.admits(node))) {
        out.add(name);
      }
    }
    out.sort(null);
    return out;
  }
}
