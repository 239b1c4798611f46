package io.gpuadmission.placement;

import io.gpuadmission.allocator.FgdPolicy;
import io.gpuadmission.allocator.FirstFitStrategy;
import io.gpuadmission.allocator.HeuristicPolicy;
import io.gpuadmission.allocator.LinkMatrix;
import io.gpuadmission.allocator.NodeGpus;
import io.gpuadmission.allocator.NvLinkStrategy;
import io.gpuadmission.allocator.ScoringPolicy;
import io.gpuadmission.allocator.TaskDistribution;
import io.gpuadmission.allocator.TopologyAwareStrategy;
import io.gpuadmission.allocator.TopologyParser;
import io.gpuadmission.allocator.WholeGpuStrategy;
import io.gpuadmission.policy.AllocatorPolicy;
import io.gpuadmission.policy.GpuPolicy;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The allocator objects a policy names, built once per policy snapshot (and, for FGD, once per
 * change of the ledger): share scoring per node, whole-GPU choice, link matrices per model.
 */
final class PlacementStrategies {
  private final GpuPolicy policy;
  private final WholeGpuStrategy whole;
  private final WholeGpuStrategy nvlinked;
  private final ScoringPolicy binpack;
  private final ScoringPolicy spread;
  /** Read for every node of a decision: a concurrent map, so that readers never take a lock. */
  private final Map<String, Optional<LinkMatrix>> links = new ConcurrentHashMap<>();
  /** The policy's {@code sharedMemory.placement} label, null when the node's label decides. */
  private final String placement;
  private final Optional<TaskDistribution> workload;
  private volatile Fgd fgd;

  private record Fgd(long generation, ScoringPolicy policy) {}

  PlacementStrategies(GpuPolicy policy, Optional<TaskDistribution> workload) {
    this.policy = policy;
    this.workload = workload;
    this.whole =
        policy.allocator().wholeGpu() == AllocatorPolicy.WholeGpuStrategy.TOPOLOGY
            ? new TopologyAwareStrategy()
            : new FirstFitStrategy();
    this.nvlinked = new NvLinkStrategy(whole);
    this.binpack = new HeuristicPolicy(HeuristicPolicy.Kind.BINPACK, whole);
    this.spread = new HeuristicPolicy(HeuristicPolicy.Kind.SPREAD, whole);
    this.placement = policy.sharedMemory().placement().map(p -> p.label()).orElse(null);
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
  ScoringPolicy shareScoring(Optional<String> nodePlacement, GpuLedger ledger) {
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
      case FGD -> fgd(ledger);
    };
  }

  /** The node with the link matrix the policy gives its model, when it has one of the right size. */
  NodeGpus withLinks(NodeGpus node) {
    var matrix = linksFor(node.model());
    return matrix.isPresent() && matrix.get().size() == node.gpus().size()
        ? new NodeGpus(node.name(), node.gpus(), matrix, node.cpuCapacity(), node.cpuFree())
        : node;
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

  /**
   * FGD measured against the given target workload, else against the memory shares the ledger
   * holds now (the observed workload); binpack until there is a workload to measure against.
   */
  private ScoringPolicy fgd(GpuLedger ledger) {
    if (workload.isPresent()) {
      var fixed = fgd;
      if (fixed == null) {
        fixed = new Fgd(-1, new FgdPolicy(workload.get(), whole));
        fgd = fixed;
      }
      return fixed.policy();
    }
    var current = fgd;
    var generation = ledger.generation();
    if (current == null || current.generation() != generation) {
      var shares = ledger.shares();
      current = new Fgd(generation, shares.isEmpty() ? binpack : new FgdPolicy(TaskDistribution.of(shares), whole));
      fgd = current;
    }
    return current.policy();
  }
}
