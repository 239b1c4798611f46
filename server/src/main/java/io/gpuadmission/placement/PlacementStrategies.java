package io.gpuadmission.placement;

import io.gpuadmission.allocator.FgdPolicy;
import io.gpuadmission.allocator.FirstFitStrategy;
import io.gpuadmission.allocator.GpuDevice;
import io.gpuadmission.allocator.HeuristicPolicy;
import io.gpuadmission.allocator.LinkMatrix;
import io.gpuadmission.allocator.NodeGpus;
import io.gpuadmission.allocator.NvLinkStrategy;
import io.gpuadmission.allocator.ScoringPolicy;
import io.gpuadmission.allocator.TopologyAwareStrategy;
import io.gpuadmission.allocator.TopologyParser;
import io.gpuadmission.allocator.WholeGpuStrategy;
import io.gpuadmission.policy.AllocatorPolicy;
import io.gpuadmission.policy.GpuPolicy;
import java.util.ArrayList;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Supplier;

/**
 * The allocator objects a policy names, built once per policy snapshot (and, for FGD, once per
 * change of its target workload): share scoring per node, whole-GPU choice, link matrices per
 * model.
 */
final class PlacementStrategies {
  private final GpuPolicy policy;
  private final WholeGpuStrategy whole;
  private final WholeGpuStrategy nvlinked;
  private final ScoringPolicy binpack;
  private final ScoringPolicy spread;
  /** Read for every node of a decision: concurrent maps, so that readers never take a lock. */
  private final Map<String, Optional<LinkMatrix>> links = new ConcurrentHashMap<>();
  /** The best set score of an idle board, by model and GPU count (-1: not computed yet). */
  private final Map<String, AtomicLongArray> bestSets = new ConcurrentHashMap<>();
  private final Map<String, AtomicLongArray> bestNvLinkSets = new ConcurrentHashMap<>();
  /** The policy's {@code sharedMemory.placement} label, null when the node's label decides. */
  private final String placement;
  /** The workload the policy declares, else null: the learned one is asked for each decision. */
  private final TargetWorkload declared;
  private final Supplier<TargetWorkload> learned;
  private volatile Fgd fgd;

  private record Fgd(TargetWorkload target, ScoringPolicy policy) {}

  PlacementStrategies(GpuPolicy policy, Supplier<TargetWorkload> learned) {
    this.policy = policy;
    this.learned = learned;
    this.whole =
        policy.allocator().wholeGpu() == AllocatorPolicy.WholeGpuStrategy.TOPOLOGY
            ? new TopologyAwareStrategy()
            : new FirstFitStrategy();
    this.nvlinked = new NvLinkStrategy(whole);
    this.binpack = new HeuristicPolicy(HeuristicPolicy.Kind.BINPACK, whole);
    this.spread = new HeuristicPolicy(HeuristicPolicy.Kind.SPREAD, whole);
    this.placement = policy.sharedMemory().placement().map(p -> p.label()).orElse(null);
    this.declared = TargetWorkload.declared(policy.allocator().fgdWorkload()).orElse(null);
  }

  GpuPolicy policy() {
    return policy;
  }

  WholeGpuStrategy whole() {
    return whole;
  }

  /** The whole-GPU strategy for {@code ask}: NVLink-connected sets only when it needs them. */
  WholeGpuStrategy whole(GpuAsk ask) {
    return ask.nvlink() ? nvlinked : whole;
  }

  /** The node as {@code ask} must be judged: with its model's link matrix when it needs NVLink. */
  NodeGpus judged(GpuAsk ask, NodeGpus node) {
    return ask.nvlink() ? withLinks(node) : node;
  }

  /**
   * How a share is placed on a node: the policy's {@code sharedMemory.placement} when set, else
   * the node's {@code ack.node.gpu.placement} label, else {@code allocator.memoryShare}.
   */
  ScoringPolicy shareScoring(Optional<String> nodePlacement) {
    var chosen = placement != null ? placement : nodePlacement.orElse(null);
    if ("binpack".equals(chosen)) {
      return binpack;
    }
    if ("spread".equals(chosen)) {
      return spread;
    }
    return switch (policy.allocator().memoryShare()) {
      case BINPACK -> binpack;
      case SPREAD -> spread;
      case FGD, FGD_CPU, FGD_LOOKAHEAD -> fgd();
    };
  }

  /** The node with the link matrix the policy gives its model, when it has one of the right size. */
  NodeGpus withLinks(NodeGpus node) {
    var matrix = linksFor(node.model());
    return matrix.isPresent() && matrix.get().size() == node.gpus().size()
        ? new NodeGpus(node.name(), node.gpus(), matrix, node.cpuCapacity(), node.cpuFree())
        : node;
  }

  /**
   * How much better connected a set of {@code ask}'s size the node's board offers when all its
   * GPUs are free than the set it offers now ({@code setScore}): 0 on a node without a link
   * matrix, where topology cannot tell sets apart, and wherever the board's best set is still free.
   */
  long topologyLoss(GpuAsk ask, NodeGpus linked, long setScore) {
    if (linked.links().isEmpty() || ask.count() < 2) {
      return 0;
    }
    if (ask.count() > linked.gpus().size()) {
      return 0;
    }
    // Per model (one matrix per model), per count: computed once, read without allocating.
    var known = (ask.nvlink() ? bestNvLinkSets : bestSets).computeIfAbsent(linked.model(), m -> newUnknown(linked.gpus().size()));
    var best = known.get(ask.count());
    if (best < 0) {
      var idle = new ArrayList<GpuDevice>(linked.gpus().size());
      for (var gpu : linked.gpus()) {
        idle.add(new GpuDevice(gpu.index(), gpu.model(), gpu.capacity(), 0, true));
      }
      var empty = new NodeGpus(linked.name(), idle, linked.links(), linked.cpuCapacity(), linked.cpuCapacity());
      best = Math.max(0, whole(ask).setScore(empty, ask.count()));
      known.set(ask.count(), best);
    }
    return Math.max(0, best - setScore);
  }

  private static AtomicLongArray newUnknown(int gpus) {
    var unknown = new AtomicLongArray(gpus + 1);
    for (int i = 0; i <= gpus; i++) {
      unknown.set(i, -1);
    }
    return unknown;
  }

  private Optional<LinkMatrix> linksFor(String model) {
    var known = links.get(model);
    return known != null ? known : links.computeIfAbsent(model, m -> Optional.ofNullable(policy.allocator().topologies().get(m)).flatMap(PlacementStrategies::parse));
  }

  private static Optional<LinkMatrix> parse(String text) {
    try {
      return Optional.of(TopologyParser.parse(text));
    } catch (IllegalArgumentException invalid) {
      // The policy validator refuses such a matrix at apply time; a node without one is first-fit.
      return Optional.empty();
    }
  }

  /** The workload FGD measures against now: the policy's declared one, else the learned one. */
  TargetWorkload target() {
    return declared != null ? declared : learned.get();
  }

  /** FGD against {@link #target}, rebuilt when it changes; binpack while there is nothing to measure against. */
  private ScoringPolicy fgd() {
    var target = target();
    var current = fgd;
    if (current == null || current.target() != target) {
      var variant =
          switch (policy.allocator().memoryShare()) {
            case FGD_CPU -> FgdPolicy.Variant.CPU_AWARE;
            case FGD_LOOKAHEAD -> FgdPolicy.Variant.LOOKAHEAD;
            default -> FgdPolicy.Variant.PAPER;
          };
      current = new Fgd(target, target.isEmpty() ? binpack : new FgdPolicy(target.distribution(), whole, variant));
      fgd = current;
    }
    return current.policy();
  }
}
