package io.gpuadmission.kubescheduler;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.Set;

/**
 * kube-scheduler v1.32's choice of a node for one pod at a time, as {@code pkg/scheduler/
 * schedule_one.go} makes it, for pods that ask CPU, memory and GPU resources and nothing else (no
 * volumes, ports, affinity terms, tolerations, topology spread; nodes without taints):
 *
 * <ol>
 *   <li>{@code findNodesThatPassFilters}: the nodes from {@code nextStartNodeIndex} on, round the
 *       list, that pass NodeResourcesFit (requests of every resource, pod count) and the pod's node
 *       selection, until {@code numFeasibleNodesToFind} are found; the start index moves on by the
 *       nodes looked at.
 *   <li>{@code findNodesThatPassExtenders}: the extender's filter, when the pod asks a managed
 *       resource.
 *   <li>One feasible node: taken without scoring. Otherwise {@code prioritizeNodes}: each score
 *       plugin's 0–100 times its weight, plus the extender's 0–10 × weight × (MaxNodeScore /
 *       MaxExtenderPriority = 10). Of the default plugins only NodeResourcesFit (LeastAllocated on
 *       cpu and memory, non-zero requests) and NodeResourcesBalancedAllocation (requested, std of
 *       the two fractions) tell such nodes apart; TaintToleration, NodeAffinity, PodTopologySpread,
 *       InterPodAffinity, ImageLocality and VolumeBinding give every node the same (or skip).
 *   <li>{@code selectHost}: uniformly at random among the nodes with the highest total (reservoir
 *       sampling), from a seeded generator here.
 *   <li>Assume the pod on the node; bind through the extender when it binds for the pod.
 * </ol>
 *
 * <p>One difference from the real thing: filtering runs on 16 goroutines, so which feasible nodes
 * are found first when the search stops early varies a little from run to run; here it is the
 * next ones in list order.
 */
public final class KubeSchedulerModel {
  /** schedule_one.go: minFeasibleNodesToFind, minFeasibleNodesPercentageToFind. */
  static final int MIN_FEASIBLE_NODES_TO_FIND = 100;

  static final int MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;

  /** extenderv1.MaxExtenderPriority. */
  public static final int MAX_EXTENDER_PRIORITY = 10;

  /** schedutil.DefaultMilliCPURequest and DefaultMemoryRequest: what a missing request counts as when scoring. */
  static final long DEFAULT_MILLI_CPU_REQUEST = 100;

  static final long DEFAULT_MEMORY_REQUEST = 200L * 1024 * 1024;

  /** Who picks among the feasible nodes. */
  public enum Choice {
    /** kube-scheduler: plugins plus the extender's weighted score, random among equal totals. */
    KUBE_SCHEDULER,
    /**
     * The extender's own top node (score 10), all feasible nodes considered, as the simulator
     * reports the allocator's choice; pods the extender does not score are left to kube-scheduler.
     */
    EXTENDER
  }

  /**
   * What kube-scheduler reads of a pod, and the pod itself for the extender: requests, the GPU
   * models its node selection allows (empty: any), and whether it must avoid nodes with a GPU model
   * label (the webhook's {@code DoesNotExist} term on CPU-only pods, policy {@code
   * cpuPods.keepOffGpuNodes}).
   */
  public record Pod(String name, long milliCpu, long memory, Map<String, Long> scalars, Set<String> models, boolean offGpuNodes, Object object) {
    public Pod {
      scalars = Map.copyOf(scalars);
      models = Set.copyOf(models);
    }
  }

  /** A node: allocatable resources and the model label; what pods there request is kept here. */
  public static final class Node {
    final String name;
    final String model;
    final long milliCpu;
    final long memory;
    final long pods;
    final Map<String, Long> scalars;
    long requestedCpu;
    long requestedMemory;
    long nonZeroCpu;
    long nonZeroMemory;
    long podCount;
    final Map<String, Long> requestedScalars = new HashMap<>();

    public Node(String name, String model, long milliCpu, long memory, long pods, Map<String, Long> scalars) {
      this.name = name;
      this.model = model;
      this.milliCpu = milliCpu;
      this.memory = memory;
      this.pods = pods;
      this.scalars = Map.copyOf(scalars);
    }

    public String name() {
      return name;
    }
  }

  /** The extender as kube-scheduler calls it (the service over its JSON API, or a peer's model). */
  public interface Extender {
    /** The candidates that pass, in order. */
    List<String> filter(Pod pod, List<String> nodes);

    /** Scores 0–10 by node name; empty when the extender does not prioritize. */
    Map<String, Integer> prioritize(Pod pod, List<String> nodes);

    /** Binds the pod to {@code node}: "" or the error. */
    String bind(Pod pod, String node);
  }

  private final SchedulerConfiguration config;
  private final List<Node> nodes;
  private final Optional<Extender> extender;
  /** SplittableRandom: seeds in a row give unrelated sequences (java.util.Random's first draws follow the seed). */
  private final SplittableRandom random;
  private final Choice choice;
  private int nextStartNodeIndex;

  public KubeSchedulerModel(SchedulerConfiguration config, List<Node> nodes, Optional<Extender> extender, long seed, Choice choice) {
    this.config = config;
    this.nodes = List.copyOf(nodes);
    this.extender = extender;
    this.random = new SplittableRandom(seed);
    this.choice = choice;
  }

  /** Schedules and binds {@code pod}: the node, or empty when it is unschedulable. */
  public Optional<String> schedule(Pod pod) {
    var interested = extender.isPresent() && config.extender().map(e -> e.interested(resources(pod))).orElse(false);
    var percentage = choice == Choice.EXTENDER && interested ? 100 : config.percentageOfNodesToScore();
    var feasible = findNodesThatPassFilters(pod, percentage);
    if (choice == Choice.EXTENDER && interested && config.extender().get().prioritize()) {
      // The allocator's own choice: prioritize scores only nodes the ask fits, and gives one 10.
      var host = allocatorChoice(pod, feasible);
      host.ifPresent(node -> bind(pod, node));
      return host.map(node -> node.name);
    }
    if (interested && config.extender().get().filter() && !feasible.isEmpty()) {
      var passed = new java.util.HashSet<>(extender.get().filter(pod, names(feasible)));
      feasible.removeIf(n -> !passed.contains(n.name));
    }
    if (feasible.isEmpty()) {
      return Optional.empty();
    }
    var host = feasible.size() == 1 ? feasible.get(0) : select(pod, feasible, interested);
    bind(pod, host);
    return Optional.of(host.name);
  }

  /** Binds through the extender when it binds for the pod, then assumes the pod on the node. */
  private void bind(Pod pod, Node host) {
    var interested = extender.isPresent() && config.extender().map(e -> e.interested(resources(pod))).orElse(false);
    if (interested && config.extender().get().bind()) {
      var error = extender.get().bind(pod, host.name);
      if (!error.isEmpty()) {
        throw new IllegalStateException("bind of " + pod.name() + " to " + host.name + " failed: " + error);
      }
    }
    assume(pod, host);
  }

  /** The one node prioritize scores 10, if any node can take the pod. */
  private Optional<Node> allocatorChoice(Pod pod, List<Node> feasible) {
    if (feasible.isEmpty()) {
      return Optional.empty();
    }
    var scores = extender.get().prioritize(pod, names(feasible));
    Node top = null;
    for (var node : feasible) {
      if (scores.getOrDefault(node.name, 0) == MAX_EXTENDER_PRIORITY) {
        if (top != null) {
          throw new IllegalStateException("two nodes score " + MAX_EXTENDER_PRIORITY + " for " + pod.name() + ": " + top.name + ", " + node.name);
        }
        top = node;
      }
    }
    return Optional.ofNullable(top);
  }

  private Node select(Pod pod, List<Node> feasible, boolean interested) {
    Map<String, Integer> extenderScores = Map.of();
    if (interested && config.extender().get().prioritize()) {
      extenderScores = extender.get().prioritize(pod, names(feasible));
    }
    var weight = config.extender().map(SchedulerConfiguration.Extender::weight).orElse(0L);
    var fitWeight = config.plugins().weight(ScorePlugins.NODE_RESOURCES_FIT);
    var balancedWeight = config.plugins().weight(ScorePlugins.BALANCED_ALLOCATION);
    var bestEffort = pod.milliCpu() == 0 && pod.memory() == 0;
    Node selected = null;
    long max = Long.MIN_VALUE;
    var ties = 0;
    for (var node : feasible) {
      long total = fitWeight * leastAllocated(pod, node);
      if (!bestEffort) {
        total += balancedWeight * balancedAllocation(pod, node);
      }
      total += extenderScores.getOrDefault(node.name, 0) * weight * (ScorePlugins.MAX_NODE_SCORE / MAX_EXTENDER_PRIORITY);
      if (total > max) {
        max = total;
        selected = node;
        ties = 1;
      } else if (total == max) {
        ties++;
        if (random.nextInt(ties) == 0) {
          selected = node;
        }
      }
    }
    return selected;
  }

  /** NodeResourcesFit's LeastAllocated on cpu and memory, weight 1 each, non-zero requests. */
  static long leastAllocated(Pod pod, Node node) {
    var cpu = leastRequested(node.nonZeroCpu + nonZeroCpu(pod), node.milliCpu);
    var memory = leastRequested(node.nonZeroMemory + nonZeroMemory(pod), node.memory);
    return (cpu + memory) / 2;
  }

  private static long leastRequested(long requested, long capacity) {
    if (capacity == 0 || requested > capacity) {
      return 0;
    }
    return (capacity - requested) * ScorePlugins.MAX_NODE_SCORE / capacity;
  }

  /** NodeResourcesBalancedAllocation on cpu and memory: requests as they are, fractions capped at 1. */
  static long balancedAllocation(Pod pod, Node node) {
    var cpu = Math.min(1.0, (node.requestedCpu + pod.milliCpu()) / (double) node.milliCpu);
    var memory = Math.min(1.0, (node.requestedMemory + pod.memory()) / (double) node.memory);
    var std = Math.abs((cpu - memory) / 2);
    return (long) ((1 - std) * ScorePlugins.MAX_NODE_SCORE);
  }

  private List<Node> findNodesThatPassFilters(Pod pod, int percentage) {
    var all = nodes.size();
    var toFind = numFeasibleNodesToFind(percentage, all);
    var feasible = new ArrayList<Node>(Math.min(toFind, all));
    var processed = 0;
    for (int i = 0; i < all && feasible.size() < toFind; i++) {
      var node = nodes.get((nextStartNodeIndex + i) % all);
      processed++;
      if (fits(pod, node)) {
        feasible.add(node);
      }
    }
    nextStartNodeIndex = (nextStartNodeIndex + processed) % all;
    return feasible;
  }

  /** schedule_one.go's numFeasibleNodesToFind. */
  static int numFeasibleNodesToFind(int percentage, int all) {
    if (all < MIN_FEASIBLE_NODES_TO_FIND) {
      return all;
    }
    if (percentage == 0) {
      percentage = Math.max(50 - all / 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND);
    }
    var found = all * percentage / 100;
    return Math.max(found, MIN_FEASIBLE_NODES_TO_FIND);
  }

  /** NodeResourcesFit's filter (every requested resource, the pod count) and the node selection. */
  static boolean fits(Pod pod, Node node) {
    if (!pod.models().isEmpty() && !pod.models().contains(node.model)) {
      return false;
    }
    if (pod.offGpuNodes() && !node.model.isEmpty()) {
      return false;
    }
    if (node.podCount + 1 > node.pods) {
      return false;
    }
    if (pod.milliCpu() > node.milliCpu - node.requestedCpu || pod.memory() > node.memory - node.requestedMemory) {
      return false;
    }
    for (var scalar : pod.scalars().entrySet()) {
      var allocatable = node.scalars.getOrDefault(scalar.getKey(), 0L);
      if (scalar.getValue() > allocatable - node.requestedScalars.getOrDefault(scalar.getKey(), 0L)) {
        return false;
      }
    }
    return true;
  }

  private static void assume(Pod pod, Node node) {
    node.requestedCpu += pod.milliCpu();
    node.requestedMemory += pod.memory();
    node.nonZeroCpu += nonZeroCpu(pod);
    node.nonZeroMemory += nonZeroMemory(pod);
    node.podCount++;
    pod.scalars().forEach((name, amount) -> node.requestedScalars.merge(name, amount, Long::sum));
  }

  private static long nonZeroCpu(Pod pod) {
    return pod.milliCpu() == 0 ? DEFAULT_MILLI_CPU_REQUEST : pod.milliCpu();
  }

  private static long nonZeroMemory(Pod pod) {
    return pod.memory() == 0 ? DEFAULT_MEMORY_REQUEST : pod.memory();
  }

  private static Set<String> resources(Pod pod) {
    return pod.scalars().keySet();
  }

  private static List<String> names(List<Node> nodes) {
    var out = new ArrayList<String>(nodes.size());
    for (var node : nodes) {
      out.add(node.name);
    }
    return out;
  }
}
