package io.gpuadmission.gang;

import io.fabric8.kubernetes.api.model.Node;
import io.gpuadmission.allocator.NodeGpus;
import io.gpuadmission.placement.AllocatableGpus;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.PlacementDecider.GangGroup;
import io.gpuadmission.placement.PlacementDecider.GangOutcome;
import io.gpuadmission.placement.PlacementDecider.MemberPlace;
import io.gpuadmission.pod.NodeConstraints;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Plans a complete gang's pending members with the allocator's gang planner on the ledger as it is
 * now, each member over the nodes its own nodeSelector, required affinity and tolerations admit
 * (members that differ, such as a Master and its Workers, are planned group by group), leaving out
 * nodes where a bound member already holds a host port the gang needs, and nodes a timed-out plan
 * of this gang could not be bound on; a node gives no more whole GPUs than its {@code
 * status.allocatable} count less what its pods hold ({@link AllocatableGpus}), as kube-scheduler
 * counts them. The leader plans with it; every replica's filter asks it
 * whether the gang fits, to give the same reason (cached until the ledger or the gang changes: a
 * gang's members all ask at once).
 */
public final class GangPlanning {
  /** Node labels and taints do not change the ledger's generation: a cached answer lives this long at most. */
  private static final long FRESH_NANOS = 5_000_000_000L;

  private final PlacementDecider decider;
  private final GpuLedger ledger;
  private final Supplier<List<Node>> nodes;
  private final GangRegistry registry;
  private final Map<GangKey, Cached> outcomes = new ConcurrentHashMap<>();
  private volatile GangQuota quota = GangQuota.NONE;

  /** The plan, member by member (UID), or how many members fit and on how many nodes they may run at all. */
  public sealed interface Outcome {
    record Planned(List<MemberPlace> places, Map<String, MemberPlace> byMember) implements Outcome {}

    /**
     * {@code allocatableLimits}: eligible nodes whose {@code status.allocatable} gives fewer whole
     * GPUs than they show free, each with what it offers ({@code gpu-b} → {@code 4 aliyun.com/gpu
     * allocatable}), by name.
     */
    record NoRoom(int room, int eligibleNodes, Map<String, String> allocatableLimits, String quota) implements Outcome {
      public NoRoom {
        allocatableLimits = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(allocatableLimits));
      }

      public NoRoom(int room, int eligibleNodes, Map<String, String> allocatableLimits) {
        this(room, eligibleNodes, allocatableLimits, "");
      }

      public NoRoom(int room, int eligibleNodes) {
        this(room, eligibleNodes, Map.of());
      }

      /** The gang's team quota refuses it whole ({@code quota} says why), whatever room the nodes have. */
      public static NoRoom byQuota(String quota) {
        return new NoRoom(0, 0, Map.of(), quota);
      }
    }
  }

  /**
   * Why a gang's pending members may not be placed together as far as team quotas go (its
   * ElasticQuotaTree leaf or an ancestor would pass its max); empty when they may.
   */
  @FunctionalInterface
  public interface GangQuota {
    GangQuota NONE = (gang, complete) -> Optional.empty();

    Optional<String> refusal(GangKey gang, GangStatus.Complete complete);
  }

  private record Cached(long generation, List<String> members, Set<String> avoid, long madeNanos, Outcome outcome) {}

  public GangPlanning(PlacementDecider decider, GpuLedger ledger, Supplier<List<Node>> nodes, GangRegistry registry) {
    this.decider = decider;
    this.ledger = ledger;
    this.nodes = nodes;
    this.registry = registry;
  }

  /** Plans only gangs that {@code gate} admits whole. */
  public GangPlanning withQuota(GangQuota gate) {
    this.quota = gate;
    return this;
  }

  public Outcome plan(GangKey gang, GangStatus.Complete complete) {
    return plan(gang, complete, Set.of());
  }

  /** The plan, leaving out the nodes in {@code avoid}. */
  public Outcome plan(GangKey gang, GangStatus.Complete complete, Set<String> avoid) {
    return plan(gang, complete, avoid, Map.of());
  }

  /** The nodes known now, by name. */
  Map<String, Node> nodesByName() {
    var out = new java.util.HashMap<String, Node>();
    nodes.get().forEach(n -> out.put(n.getMetadata().getName(), n));
    return out;
  }

  /** True while {@code node} (null when gone) has GPUs and {@code member}'s own constraints admit it. */
  boolean admits(GangMember member, Node node) {
    return node != null && ledger.view(node.getMetadata().getName()).isPresent() && member.constraints().admits(node);
  }

  /**
   * The plan, leaving out the nodes in {@code avoid} and nodes where {@code portsPlanned} (ports of
   * plans just made, not yet on the pods) or any gang member holds a host port the gang needs.
   */
  public Outcome plan(GangKey gang, GangStatus.Complete complete, Set<String> avoid, Map<String, Set<Integer>> portsPlanned) {
    var refused = quota.refusal(gang, complete);
    if (refused.isPresent()) {
      return Outcome.NoRoom.byQuota(refused.get());
    }
    var members = complete.unbound().stream().map(GangMember::uid).toList();
    var generation = ledger.generation();
    var cached = outcomes.get(gang);
    if (portsPlanned.isEmpty() && cached != null && cached.generation() == generation && cached.members().equals(members) && cached.avoid().equals(avoid)
        && System.nanoTime() - cached.madeNanos() < FRESH_NANOS) {
      return cached.outcome();
    }
    var outcome = planNow(gang, complete, avoid, portsPlanned);
    outcomes.put(gang, new Cached(generation, members, Set.copyOf(avoid), System.nanoTime(), outcome));
    if (outcomes.size() > 10_000) {
      outcomes.clear(); // gangs come and go; a cache that only grows would hold every gang ever seen
    }
    return outcome;
  }

  /**
   * The plan on the nodes' GPUs as {@code views} gives them (preemption: as if the pods it may
   * evict were gone), not cached.
   */
  public Outcome planOver(GangKey gang, GangStatus.Complete complete, Function<String, Optional<NodeGpus>> views) {
    var refused = quota.refusal(gang, complete);
    if (refused.isPresent()) {
      return Outcome.NoRoom.byQuota(refused.get());
    }
    return planNow(gang, complete, Set.of(), Map.of(), views);
  }

  private Outcome planNow(GangKey gang, GangStatus.Complete complete, Set<String> avoid, Map<String, Set<Integer>> portsPlanned) {
    return planNow(gang, complete, avoid, portsPlanned, ledger::view);
  }

  private Outcome planNow(
      GangKey gang, GangStatus.Complete complete, Set<String> avoid, Map<String, Set<Integer>> portsPlanned,
      Function<String, Optional<NodeGpus>> views) {
    var groups = new LinkedHashMap<NodeConstraints, List<GangMember>>();
    complete.unbound().forEach(m -> groups.computeIfAbsent(m.constraints(), c -> new ArrayList<>()).add(m));
    var ports = new HashSet<Integer>();
    complete.unbound().forEach(m -> ports.addAll(m.hostPorts()));
    var portsInUse = new java.util.HashMap<String, Set<Integer>>();
    if (!ports.isEmpty()) {
      // Other gangs' members only: this gang's own planned members are being planned again.
      var own = new HashSet<>(complete.unbound().stream().map(GangMember::uid).toList());
      registry.hostPortsByNode(own).forEach((n, p) -> portsInUse.computeIfAbsent(n, k -> new HashSet<>()).addAll(p));
      portsPlanned.forEach((n, p) -> portsInUse.computeIfAbsent(n, k -> new HashSet<>()).addAll(p));
    }
    var all = nodes.get();
    var planned = new ArrayList<GangGroup>();
    var eligible = new HashSet<String>();
    for (var group : groups.entrySet()) {
      var names = new ArrayList<String>();
      for (var node : all) {
        var name = node.getMetadata().getName();
        var portsTaken = portsInUse.getOrDefault(name, Set.of()).stream().anyMatch(ports::contains);
        if (!avoid.contains(name) && !portsTaken && ledger.view(name).isPresent() && group.getKey().admits(node)) {
          names.add(name);
        }
      }
      names.sort(null);
      eligible.addAll(names);
      planned.add(new GangGroup(names, group.getValue().size()));
    }
    // kube-scheduler's NodeResourcesFit admits a member only within the node's allocatable count, not its GPU labels.
    var allocatable = AllocatableGpus.of(complete.resource(), all);
    var outcome = decider.planGang(planned, complete.gpusEach(), complete.perNode(), complete.nvlink(), views, allocatable::gpusAllowed);
    if (outcome instanceof GangOutcome.NoRoom noRoom) {
      var limits = new java.util.TreeMap<String, String>();
      for (var name : eligible) {
        views.apply(name).flatMap(allocatable::limit).ifPresent(limit -> limits.put(name, limit));
      }
      return new Outcome.NoRoom(noRoom.room(), eligible.size(), limits);
    }
    var places = ((GangOutcome.Planned) outcome).places();
    var byMember = new LinkedHashMap<String, MemberPlace>();
    var next = 0;
    for (var group : groups.values()) {
      for (var member : group) {
        byMember.put(member.uid(), places.get(next++));
      }
    }
    return new Outcome.Planned(places, byMember);
  }
}
