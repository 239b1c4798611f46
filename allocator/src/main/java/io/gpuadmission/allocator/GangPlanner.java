package io.gpuadmission.allocator;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * Places a whole gang at once: {@code members} pods of {@code gpusEach} whole GPUs each, on as few
 * nodes as possible, each member on the best-connected free set of its node. Either every member
 * gets a place or none does, and then the plan says how many members the cluster has room for.
 *
 * <p>Per node, members are placed one after another, each with the whole-GPU strategy on what the
 * previous ones left (so an idle DGX-1 takes four 2-GPU members as {0,3}, {1,2}, {4,7}, {5,6}).
 * Fewest nodes: nodes are taken by how many members they hold, most first, and the last, partly
 * used node is the one where the remaining members are best connected. Among equals the fullest
 * node goes first, so that emptier nodes stay free for larger gangs.
 */
public final class GangPlanner {
  private final WholeGpuStrategy strategy;

  public GangPlanner(WholeGpuStrategy strategy) {
    this.strategy = strategy;
  }

  /** The plan, or how many members fit when not all do. */
  public sealed interface Result {
    /**
     * Every member placed ({@link Placement#node()} is the node's position in the list planned
     * over), grouped by node in the order nodes were taken.
     */
    record Planned(List<Placement> placements) implements Result {
      public Planned {
        placements = List.copyOf(placements);
      }
    }

    /** Not all members fit; {@code room} members would. */
    record NoRoom(int room) implements Result {}
  }

  /** The members a node could hold, in the order they would be placed, and their total set score. */
  private record NodeCapacity(int position, NodeGpus node, List<GpuChoice> choices) {
    long score(int members) {
      long sum = 0;
      for (int i = 0; i < members; i++) {
        sum += choices.get(i).setScore();
      }
      return sum;
    }

    int freeGpus() {
      var free = 0;
      for (var gpu : node.gpus()) {
        free += gpu.wholeFree() ? 1 : 0;
      }
      return free;
    }
  }

  public Result plan(List<NodeGpus> nodes, int members, int gpusEach) {
    return plan(nodes, members, gpusEach, members);
  }

  /**
   * The plan with at most {@code perNode} members on any node (1 for members that use host ports:
   * two of them on one node would ask for the same port).
   */
  public Result plan(List<NodeGpus> nodes, int members, int gpusEach, int perNode) {
    return plan(nodes, members, gpusEach, perNode, node -> Integer.MAX_VALUE);
  }

  /**
   * The plan where a node may give at most {@code gpusAllowed} more whole GPUs, however many its
   * GPUs show free (the node's device plugin reports fewer to the kubelet: kube-scheduler admits a
   * pod only within the node's allocatable count less what its pods already request).
   */
  public Result plan(List<NodeGpus> nodes, int members, int gpusEach, int perNode, ToIntFunction<NodeGpus> gpusAllowed) {
    if (members <= 0 || gpusEach <= 0 || perNode <= 0) {
      throw new IllegalArgumentException("a gang needs members and GPUs: " + members + " x " + gpusEach + ", " + perNode + " per node");
    }
    var capacities = new ArrayList<NodeCapacity>();
    var room = 0;
    for (int position = 0; position < nodes.size(); position++) {
      var node = nodes.get(position);
      var capacity = capacity(position, node, Math.min(Math.min(members, perNode), Math.max(0, gpusAllowed.applyAsInt(node)) / gpusEach), gpusEach);
      if (!capacity.choices().isEmpty()) {
        capacities.add(capacity);
        room += capacity.choices().size();
      }
    }
    if (room < members) {
      return new Result.NoRoom(room);
    }
    capacities.sort(
        Comparator.comparingInt((NodeCapacity c) -> -c.choices().size())
            .thenComparingLong(c -> -c.score(c.choices().size()))
            .thenComparingInt(NodeCapacity::freeGpus)
            .thenComparing(c -> c.node().name()));
    var placements = new ArrayList<Placement>(members);
    var remaining = members;
    var next = 0;
    while (remaining > 0 && remaining >= capacities.get(next).choices().size()) {
      var taken = capacities.get(next++);
      taken.choices().forEach(choice -> placements.add(new Placement(taken.position(), choice.gpus())));
      remaining -= taken.choices().size();
    }
    if (remaining > 0) {
      var last = lastNode(capacities.subList(next, capacities.size()), remaining);
      for (int i = 0; i < remaining; i++) {
        placements.add(new Placement(last.position(), last.choices().get(i).gpus()));
      }
    }
    return new Result.Planned(placements);
  }

  /** Of the nodes left, the one holding the last members best connected, then the fullest, then by name. */
  private static NodeCapacity lastNode(List<NodeCapacity> candidates, int members) {
    return candidates.stream()
        .filter(c -> c.choices().size() >= members)
        .min(
            Comparator.comparingLong((NodeCapacity c) -> -c.score(members))
                .thenComparingInt(NodeCapacity::freeGpus)
                .thenComparing(c -> c.node().name()))
        .orElseThrow();
  }

  private NodeCapacity capacity(int position, NodeGpus node, int members, int gpusEach) {
    var choices = new ArrayList<GpuChoice>();
    var current = node;
    while (choices.size() < members) {
      var choice = strategy.choose(current, gpusEach);
      if (choice.isEmpty()) {
        break;
      }
      choices.add(choice.get());
      current = taken(current, choice.get().gpus());
    }
    return new NodeCapacity(position, node, choices);
  }

  /** The node with {@code gpus} wholly used. */
  private static NodeGpus taken(NodeGpus node, int[] gpus) {
    var devices = new ArrayList<>(node.gpus());
    for (var g : gpus) {
      var gpu = devices.get(g);
      devices.set(g, gpu.withUsed(gpu.capacity()));
    }
    return new NodeGpus(node.name(), devices, node.links(), node.cpuCapacity(), node.cpuFree());
  }
}
