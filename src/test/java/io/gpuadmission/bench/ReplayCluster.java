package io.gpuadmission.bench;

import io.gpuadmission.allocator.FirstFitStrategy;
import io.gpuadmission.allocator.GpuDevice;
import io.gpuadmission.allocator.HeuristicPolicy;
import io.gpuadmission.allocator.NodeGpus;
import io.gpuadmission.allocator.Placement;
import io.gpuadmission.allocator.ScoringPolicy;
import io.gpuadmission.allocator.Task;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The GPUs of the trace's nodes while a replay runs: where pods go (the allocator's best-fit
 * policy with first-fit whole GPUs, the trace simulator's baseline path), what they free when they
 * leave, and whether a pod would fit a node once some pods are gone (reclaim's room check). GPUs
 * only: quotas here are of GPUs, and CPU left out keeps the comparison between modes about them.
 */
final class ReplayCluster {
  /** A pod holding GPUs: its task and the GPU indices it took on node {@code node}. */
  record Held(Task task, int node, int[] gpus) {}

  private final List<NodeGpus> nodes = new ArrayList<>();
  private final Map<String, Integer> indexOf = new HashMap<>();
  private final ScoringPolicy policy = new HeuristicPolicy(HeuristicPolicy.Kind.BEST_FIT, new FirstFitStrategy());
  private final long capacity;
  private long allocated;

  ReplayCluster(List<TraceSimulator.TraceNode> traceNodes) {
    for (var n : traceNodes) {
      var gpus = new ArrayList<GpuDevice>();
      for (var g = 0; g < n.gpus(); g++) {
        gpus.add(new GpuDevice(g, n.model(), TraceSimulator.GPU, 0, true));
      }
      indexOf.put(n.name(), nodes.size());
      nodes.add(NodeGpus.withoutCpu(n.name(), gpus, Optional.empty()));
    }
    capacity = nodes.stream().mapToLong(NodeGpus::gpuCapacity).sum();
  }

  /** Milli-GPU of all nodes. */
  long capacity() {
    return capacity;
  }

  /** Milli-GPU held by pods now. */
  long allocated() {
    return allocated;
  }

  /** Where {@code task} would go now, if anywhere. */
  Optional<Placement> place(Task task) {
    return policy.place(nodes, task);
  }

  /** Where {@code task} would go on node {@code name} once {@code gone} have left it. */
  Optional<int[]> placeOn(String name, Task task, Collection<Held> gone) {
    var index = indexOf.get(name);
    var node = nodes.get(index);
    for (var held : gone) {
      if (held.node() == index) {
        node = release(node, held);
      }
    }
    return policy.chooseOnNode(node, task);
  }

  /** Takes the GPUs of a placement. */
  Held take(Task task, int node, int[] gpus) {
    nodes.set(node, nodes.get(node).after(task, gpus));
    allocated += task.gpus() * task.takes(TraceSimulator.GPU);
    return new Held(task, node, gpus);
  }

  /** Gives back what {@code held} took. */
  void give(Held held) {
    nodes.set(held.node(), release(nodes.get(held.node()), held));
    allocated -= held.task().gpus() * held.task().takes(TraceSimulator.GPU);
  }

  int index(String name) {
    return indexOf.get(name);
  }

  String name(int index) {
    return nodes.get(index).name();
  }

  List<String> names() {
    return nodes.stream().map(NodeGpus::name).toList();
  }

  private static NodeGpus release(NodeGpus node, Held held) {
    var gpus = new ArrayList<>(node.gpus());
    for (var index : held.gpus()) {
      var gpu = gpus.get(index);
      gpus.set(index, gpu.withUsed(gpu.used() - held.task().takes(gpu.capacity())));
    }
    return NodeGpus.withoutCpu(node.name(), gpus, node.links());
  }
}
