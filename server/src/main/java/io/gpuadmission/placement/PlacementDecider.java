package io.gpuadmission.placement;

import io.fabric8.kubernetes.api.model.Node;
import io.gpuadmission.allocator.GangPlanner;
import io.gpuadmission.allocator.NodeGpus;
import io.gpuadmission.policy.GpuPolicy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The extender's decisions, read from the ledger and made by the allocator: which nodes can take a
 * pod and why not (filter), how good each is (prioritize, 0–10), which GPUs it gets (bind). Before
 * any GPU is counted, a node must be one the pod may go to at all ({@link NodeEligibility}, judged
 * on the Node objects of the node informer). The trace simulator drives this same class.
 */
public final class PlacementDecider {
  /** kube-scheduler's {@code MaxExtenderPriority}. */
  public static final int MAX_SCORE = 10;

  private final GpuLedger ledger;
  private final Supplier<GpuPolicy> policies;
  private final Supplier<TargetWorkload> learned;
  private final Function<String, Optional<Node>> nodes;
  private volatile PlacementStrategies strategies;

  /**
   * A decider without a learned workload and without Node objects to judge eligibility by: FGD
   * measures against the policy's declared workload, and places as binpack where the policy
   * declares none.
   */
  public PlacementDecider(GpuLedger ledger, Supplier<GpuPolicy> policies) {
    this(ledger, policies, () -> TargetWorkload.NONE);
  }

  /**
   * FGD measures fragmentation against the policy's declared workload, else against {@code
   * learned} (the service's {@link WorkloadLearner}; the trace simulator's reference run hands over
   * a fixed one).
   */
  public PlacementDecider(GpuLedger ledger, Supplier<GpuPolicy> policies, Supplier<TargetWorkload> learned) {
    this(ledger, policies, learned, name -> Optional.empty());
  }

  /** As above; {@code nodes}: the Node object of a name, as the node informer has it (empty when unknown). */
  public PlacementDecider(
      GpuLedger ledger, Supplier<GpuPolicy> policies, Supplier<TargetWorkload> learned, Function<String, Optional<Node>> nodes) {
    this.ledger = ledger;
    this.policies = policies;
    this.learned = learned;
    this.nodes = nodes;
  }

  /** Nodes that can take the ask, and for the others the reason, split by whether eviction could help. */
  public record FilterResult(List<String> passed, Map<String, String> failed, Map<String, String> unresolvable) {}

  /** A node's score for kube-scheduler. */
  public record NodeScore(String node, int score) {}

  /** GPUs chosen on one node, or the reason there are none. */
  public sealed interface Choice {
    record Chosen(List<Integer> gpus) implements Choice {}

    record Refused(String reason) implements Choice {}
  }

  /** Where a gang's members go, or how many of them the cluster has room for. */
  public sealed interface GangOutcome {
    /** One place per member, in the order the planner took nodes (fewest nodes, best connected). */
    record Planned(List<MemberPlace> places) implements GangOutcome {
      public Planned {
        places = List.copyOf(places);
      }
    }

    record NoRoom(int room) implements GangOutcome {}
  }

  /** One member's node and whole GPUs. */
  public record MemberPlace(String node, List<Integer> gpus) {
    public MemberPlace {
      gpus = List.copyOf(gpus);
    }
  }

  /** Members of a gang that may run on the same nodes ({@code nodes}), and how many they are. */
  public record GangGroup(List<String> nodes, int members) {
    public GangGroup {
      nodes = List.copyOf(nodes);
    }
  }

  /**
   * Plans a gang of members of {@code gpusEach} whole GPUs each, group after group (members whose
   * node selection differs, such as a Master and its Workers), each group over its own nodes and
   * what the groups before it left, at most {@code perNode} members on one node, with the
   * allocator's gang planner and the policy's whole-GPU strategy and link matrices; with {@code
   * nvlink}, each member's GPUs all NVLink-connected. Places come back group by group.
   */
  public GangOutcome planGang(List<GangGroup> groups, int gpusEach, int perNode, boolean nvlink) {
    return planGang(groups, gpusEach, perNode, nvlink, ledger::view);
  }

  /** As above, on the nodes' GPUs as {@code views} gives them (preemption: with some pods taken away). */
  public GangOutcome planGang(
      List<GangGroup> groups, int gpusEach, int perNode, boolean nvlink, Function<String, Optional<NodeGpus>> nodeViews) {
    return planGang(groups, gpusEach, perNode, nvlink, nodeViews, view -> Integer.MAX_VALUE);
  }

  /**
   * As above, a node giving at most {@code gpusAllowed} more whole GPUs (asked of the node as the
   * groups before have left it: {@link AllocatableGpus}).
   */
  public GangOutcome planGang(
      List<GangGroup> groups, int gpusEach, int perNode, boolean nvlink, Function<String, Optional<NodeGpus>> nodeViews,
      java.util.function.ToIntFunction<NodeGpus> gpusAllowed) {
    var s = strategies();
    var planner = new GangPlanner(s.whole(nvlink ? GpuAsk.nvlinked(gpusEach) : GpuAsk.whole(gpusEach)));
    var working = new java.util.HashMap<String, NodeGpus>();
    var places = new ArrayList<MemberPlace>();
    var room = 0;
    var fits = true;
    for (var group : groups) {
      var views = new ArrayList<NodeGpus>(group.nodes().size());
      for (var name : group.nodes()) {
        var taken = perNode == 1 && places.stream().anyMatch(p -> p.node().equals(name));
        var view = working.containsKey(name) ? Optional.of(working.get(name)) : nodeViews.apply(name).map(s::withLinks);
        if (!taken) {
          view.ifPresent(views::add);
        }
      }
      var result = planner.plan(views, group.members(), gpusEach, perNode, gpusAllowed);
      if (result instanceof GangPlanner.Result.NoRoom noRoom) {
        room += noRoom.room();
        fits = false;
        continue;
      }
      for (var placement : ((GangPlanner.Result.Planned) result).placements()) {
        var node = views.get(placement.node());
        places.add(new MemberPlace(node.name(), java.util.Arrays.stream(placement.gpus()).boxed().toList()));
        working.put(node.name(), taken(working.getOrDefault(node.name(), node), placement.gpus()));
      }
      room += group.members();
    }
    return fits ? new GangOutcome.Planned(places) : new GangOutcome.NoRoom(room);
  }

  /** The node with {@code gpus} wholly used (what the next group of a gang sees). */
  private static NodeGpus taken(NodeGpus node, int[] gpus) {
    var devices = new ArrayList<>(node.gpus());
    for (var g : gpus) {
      devices.set(g, devices.get(g).withUsed(devices.get(g).capacity()));
    }
    return new NodeGpus(node.name(), devices, node.links(), node.cpuCapacity(), node.cpuFree());
  }

  public FilterResult filter(GpuAsk ask, List<String> nodes) {
    return filter(ask, NodeEligibility.ANY, nodes, Nominations.NONE, 0, "");
  }

  /**
   * Nodes that can take the ask and that the pod may go to ({@code eligibility}), and why not for
   * the others, for a pod of {@code priority} (UID {@code uid}): the GPUs of pods nominated to a
   * node are held there for it as kube-scheduler holds their node resources.
   */
  public FilterResult filter(
      GpuAsk ask, NodeEligibility eligibility, List<String> nodes, Nominations nominations, int priority, String uid) {
    if (passesUntouched(ask)) {
      return new FilterResult(nodes, Map.of(), Map.of());
    }
    var s = strategies();
    var resource = s.policy().sharedMemory().resourceName();
    var passed = new ArrayList<String>(nodes.size());
    var failed = new LinkedHashMap<String, String>();
    var unresolvable = new LinkedHashMap<String, String>();
    for (var name : nodes) {
      // No lambdas per node: filter runs this for thousands of nodes per pod.
      var view = ledger.view(name);
      var refusal = view.isPresent() ? eligibility.refusal(name, this.nodes) : Optional.of(NodeRefusal.withoutView(ledger, name));
      if (refusal.isEmpty()) {
        var held = nominations.heldOn(name, priority, uid);
        var judged = held.isEmpty() ? view.get() : withHolds(s, name, view.get(), held);
        refusal = NodeRefusal.of(ask, s.judged(ask, judged), resource);
      }
      if (refusal.isEmpty()) {
        passed.add(name);
      } else {
        (refusal.get().unresolvable() ? unresolvable : failed).put(name, refusal.get().reason());
      }
    }
    return new FilterResult(passed, failed, unresolvable);
  }

  /**
   * Scores 0–10: the allocator's choice ({@link #best}) alone gets 10, so that kube-scheduler, which
   * adds its own plugins' scores and picks at random among equal totals, still takes it when the
   * extender's weight makes one step outweigh them; every other node that can take the ask gets
   * 0–9, scaled between the choice and the worst candidate. Nodes that cannot take the ask score
   * 0; a pod without GPUs scores 0 everywhere (kube-scheduler's own plugins decide).
   */
  public List<NodeScore> prioritize(GpuAsk ask, List<String> nodes) {
    return prioritize(ask, NodeEligibility.ANY, nodes);
  }

  /** As {@link #prioritize(GpuAsk, List)}; a node the pod may not go to scores 0 and is never the choice. */
  public List<NodeScore> prioritize(GpuAsk ask, NodeEligibility eligibility, List<String> nodes) {
    var raw = new double[nodes.size()];
    var views = new NodeGpus[nodes.size()];
    var chosen = passesUntouched(ask) ? -1 : rank(ask, eligibility, nodes, raw, views);
    double worst = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < nodes.size(); i++) {
      if (views[i] != null) {
        worst = Math.max(worst, raw[i]);
      }
    }
    var out = new ArrayList<NodeScore>(nodes.size());
    for (int i = 0; i < nodes.size(); i++) {
      int score;
      if (i == chosen) {
        score = MAX_SCORE;
      } else if (views[i] == null) {
        score = 0;
      } else {
        var best = raw[chosen];
        score = worst == best ? MAX_SCORE - 1 : (int) Math.round((MAX_SCORE - 1) * (worst - raw[i]) / (worst - best));
      }
      out.add(new NodeScore(nodes.get(i), score));
    }
    return out;
  }

  /**
   * The node prioritize gives 10: the lowest raw score (binpack, spread or FGD; topology first for
   * whole GPUs where a link matrix makes it matter); among equal scores the fuller node (the
   * smaller share of its GPU capacity free, then the less free), then the first name in
   * lexicographic order. The trace simulator takes the same node.
   */
  public Optional<String> best(GpuAsk ask, List<String> nodes) {
    var chosen = rank(ask, NodeEligibility.ANY, nodes, new double[nodes.size()], new NodeGpus[nodes.size()]);
    return chosen < 0 ? Optional.empty() : Optional.of(nodes.get(chosen));
  }

  /**
   * Scores every node into {@code raw}, with its view in {@code views} where the ask fits (null
   * elsewhere), and returns the position of the best node, or -1 when none fits.
   */
  private int rank(GpuAsk ask, NodeEligibility eligibility, List<String> nodes, double[] raw, NodeGpus[] views) {
    var scorer = new NodeScorer(strategies(), ledger, ask);
    var chosen = -1;
    for (int i = 0; i < nodes.size(); i++) {
      var view = ledger.view(nodes.get(i));
      if (view.isEmpty() || eligibility.refusal(nodes.get(i), this.nodes).isPresent()) {
        continue;
      }
      var score = scorer.score(nodes.get(i), view.get());
      if (Double.isNaN(score)) {
        continue;
      }
      raw[i] = score;
      views[i] = view.get();
      if (chosen < 0 || before(score, view.get(), raw[chosen], views[chosen])) {
        chosen = i;
      }
    }
    return chosen;
  }

  /** Whether a node scoring {@code score} goes before one scoring {@code other} (see {@link #best}). */
  private static boolean before(double score, NodeGpus node, double other, NodeGpus otherNode) {
    if (score != other) {
      return score < other;
    }
    // Fuller first: free/capacity compared without division (GiB or milli-GPU: no overflow).
    var share = Long.compare(node.gpuFree() * otherNode.gpuCapacity(), otherNode.gpuFree() * node.gpuCapacity());
    if (share != 0) {
      return share < 0;
    }
    if (node.gpuFree() != otherNode.gpuFree()) {
      return node.gpuFree() < otherNode.gpuFree();
    }
    return node.name().compareTo(otherNode.name()) < 0;
  }

  /** The workload FGD measures against now (the policy's, else the learned one). */
  public TargetWorkload workload() {
    return strategies().target();
  }

  /**
   * Why a node whose GPUs are as {@code node} says cannot take {@code ask}, judged as filter judges
   * the ledger's view (preemption asks it of the node with some pods taken away); empty when it can.
   */
  public Optional<NodeRefusal> refusal(GpuAsk ask, NodeGpus node) {
    var s = strategies();
    return NodeRefusal.of(ask, s.judged(ask, node), s.policy().sharedMemory().resourceName());
  }

  /** Those of {@code names} the pod may go to: where making room on the GPUs could place it. */
  public List<String> eligibleAmong(NodeEligibility eligibility, java.util.Collection<String> names) {
    var out = new ArrayList<String>(names.size());
    for (var name : names) {
      if (eligibility.refusal(name, nodes).isEmpty()) {
        out.add(name);
      }
    }
    return out;
  }

  /** The GPUs {@code ask} gets on {@code node} now (bind's re-check against the ledger). */
  public Choice choose(GpuAsk ask, String node) {
    return choose(ask, NodeEligibility.ANY, node, List.of());
  }

  /**
   * The GPUs {@code ask} gets on {@code node} now, if the pod may go there ({@code eligibility}),
   * with the GPUs of pods nominated there ({@code held}) taken first, as filter took them.
   */
  public Choice choose(GpuAsk ask, NodeEligibility eligibility, String node, List<GpuAsk> held) {
    var view = ledger.view(node);
    if (view.isEmpty()) {
      return new Choice.Refused("node " + node + ": " + NodeRefusal.withoutView(ledger, node).reason());
    }
    var s = strategies();
    var judged = held.isEmpty() ? view.get() : withHolds(s, node, view.get(), held);
    var refusal = eligibility.refusal(node, nodes);
    if (refusal.isEmpty()) {
      refusal = NodeRefusal.of(ask, s.judged(ask, judged), s.policy().sharedMemory().resourceName());
    }
    if (refusal.isPresent()) {
      return new Choice.Refused("node " + node + ": " + refusal.get().reason());
    }
    return gpusFor(s, ask, node, judged)
        .<Choice>map(g -> new Choice.Chosen(java.util.Arrays.stream(g).boxed().toList()))
        .orElseGet(() -> new Choice.Refused("node " + node + ": no GPU choice for " + ask));
  }

  private Optional<int[]> gpusFor(PlacementStrategies s, GpuAsk ask, String node, NodeGpus view) {
    return switch (ask.kind()) {
      case NONE -> Optional.of(new int[0]);
      case SHARE -> s.shareScoring(placementLabel(node)).chooseOnNode(view, ask.task());
      case WHOLE -> s.whole(ask).choose(s.withLinks(view), ask.count()).map(c -> c.gpus());
    };
  }

  /**
   * The node with the GPUs each held ask would get taken, in turn (an ask that no longer fits takes
   * nothing: its node is short anyway, which kube-scheduler's own filters see).
   */
  private NodeGpus withHolds(PlacementStrategies s, String node, NodeGpus view, List<GpuAsk> held) {
    var out = view;
    for (var hold : held) {
      var gpus = heldGpus(s, node, out, hold);
      if (gpus.isPresent()) {
        out = out.after(hold.task(), gpus.get());
      }
    }
    return out;
  }

  private Optional<int[]> heldGpus(PlacementStrategies s, String node, NodeGpus view, GpuAsk hold) {
    if (NodeRefusal.of(hold, s.judged(hold, view), s.policy().sharedMemory().resourceName()).isPresent()) {
      return Optional.empty();
    }
    return gpusFor(s, hold, node, view);
  }

  /**
   * The GPUs the held asks take on {@code node}, as claims (UIDs {@code held-0}, {@code held-1},
   * ...; never pods), for preemption, which must count them and can evict none of them.
   */
  public List<GpuClaim> heldClaims(String node, NodeGpus view, List<GpuAsk> held) {
    var s = strategies();
    var out = new ArrayList<GpuClaim>();
    var now = view;
    for (var hold : held) {
      var gpus = heldGpus(s, node, now, hold);
      if (gpus.isPresent()) {
        now = now.after(hold.task(), gpus.get());
        var indices = java.util.Arrays.stream(gpus.get()).boxed().toList();
        out.add(GpuClaim.reserved("held-" + out.size(), "held", node, indices, hold.kind() == GpuAsk.Kind.SHARE ? hold.memory() : 0));
      }
    }
    return out;
  }

  /**
   * Why {@code ask} does not fit {@code view} of {@code node} once the GPUs of pods nominated there
   * ({@code held}) are taken first, as filter takes them; empty when it fits.
   */
  public Optional<NodeRefusal> refusal(GpuAsk ask, String node, NodeGpus view, List<GpuAsk> held) {
    var s = strategies();
    return NodeRefusal.of(ask, s.judged(ask, held.isEmpty() ? view : withHolds(s, node, view, held)), s.policy().sharedMemory().resourceName());
  }

  /** A pod without GPUs, where CPU is not counted, is kube-scheduler's business alone. */
  private static boolean passesUntouched(GpuAsk ask) {
    return ask.kind() == GpuAsk.Kind.NONE && ask.cpuMilli() == 0;
  }

  private Optional<String> placementLabel(String node) {
    return ledger.capacity(node).flatMap(GpuNodeCapacity::placement);
  }

  /** Strategies of the policy in force, rebuilt when the policy snapshot changes. */
  private PlacementStrategies strategies() {
    var policy = policies.get();
    var current = strategies;
    if (current == null || current.policy() != policy) {
      current = new PlacementStrategies(policy, learned);
      strategies = current;
    }
    return current;
  }
}
