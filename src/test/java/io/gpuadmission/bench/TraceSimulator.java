package io.gpuadmission.bench;

import io.gpuadmission.allocator.FirstFitStrategy;
import io.gpuadmission.allocator.GpuDevice;
import io.gpuadmission.allocator.HeuristicPolicy;
import io.gpuadmission.allocator.NodeGpus;
import io.gpuadmission.allocator.PlacementPolicy;
import io.gpuadmission.allocator.RandomPolicy;
import io.gpuadmission.allocator.Task;
import io.gpuadmission.allocator.TaskDistribution;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.GpuNodeCapacity;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.PolicyParser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

/**
 * Replays the Alibaba GPU trace the way the FGD paper's evaluation does: shuffle the tasks with a
 * seed, add copies of random tasks until the total GPU request reaches 130 % of the cluster's
 * GPUs, place them one by one with no departures (a task that fits nowhere is skipped), and report
 * the cluster's GPU allocation ratio. GPUs count in milli-GPU (1000 each).
 *
 * <p>Usage: {@code TraceSimulator --nodes FILE --pods FILE --policy binpack|spread|best-fit|fgd|random
 * --seeds 42-51 [--demand 1.3]}
 */
public final class TraceSimulator {
  static final long GPU = 1000;

  /** The outcome of one run. */
  public record Result(long seed, double allocationRatio, int placed, int skipped) {}

  private final List<NodeGpus> cluster;
  private final List<Task> workload;

  public TraceSimulator(List<NodeGpus> cluster, List<Task> workload) {
    this.cluster = List.copyOf(cluster);
    this.workload = List.copyOf(workload);
  }

  public static TraceSimulator load(Path nodes, Path pods) throws IOException {
    return new TraceSimulator(readNodes(nodes), readPods(pods));
  }

  public Result run(String policyName, long seed, double demand) {
    var random = new Random(seed);
    var tasks = new ArrayList<>(workload);
    Collections.shuffle(tasks, random);
    long capacity = cluster.stream().mapToLong(NodeGpus::gpuCapacity).sum();
    long requested = tasks.stream().mapToLong(TraceSimulator::gpuRequest).sum();
    while (requested < demand * capacity) {
      var copy = workload.get(random.nextInt(workload.size()));
      tasks.add(copy);
      requested += gpuRequest(copy);
    }
    return switch (policyName) {
      case "binpack", "spread", "fgd" -> runOnExtenderPath(policyName, tasks, seed, capacity);
      default -> runBaseline(policyName, tasks, seed, capacity);
    };
  }

  /**
   * The product's strategies go through the extender's own decision code: the GPU ledger holds the
   * nodes (CPU counted, as kube-scheduler would), {@link PlacementDecider#best} is the node
   * prioritize ranks first, {@link PlacementDecider#choose} the GPUs bind picks, and the ledger's
   * reservation records them, exactly as bind does.
   */
  private Result runOnExtenderPath(String strategy, List<Task> tasks, long seed, long capacity) {
    var ledger = new GpuLedger();
    var names = new ArrayList<String>(cluster.size());
    for (var node : cluster) {
      var memory = node.gpus().stream().map(GpuDevice::capacity).toList();
      ledger.putNode(new GpuNodeCapacity(node.name(), node.model(), memory, Optional.empty(), node.cpuCapacity()));
      names.add(node.name());
    }
    var policy = withStrategy(strategy);
    var gpuTasks = workload.stream().filter(t -> t.gpus() > 0).toList();
    var decider = new PlacementDecider(ledger, () -> policy, Optional.of(TaskDistribution.of(gpuTasks)));
    var placed = 0;
    var skipped = 0;
    for (int i = 0; i < tasks.size(); i++) {
      var task = tasks.get(i);
      var ask = ask(task);
      var node = decider.best(ask, names);
      var choice = node.map(n -> decider.choose(ask, n));
      if (choice.isEmpty() || !(choice.get() instanceof PlacementDecider.Choice.Chosen chosen)) {
        skipped++;
        continue;
      }
      var claim = GpuClaim.reserved("task-" + i, "trace/task-" + i, node.get(), chosen.gpus(), ask.kind() == GpuAsk.Kind.SHARE ? ask.memory() : 0, task.cpuMilli());
      if (!ledger.reserve(claim)) {
        throw new IllegalStateException("the ledger refused what the decider chose: " + claim);
      }
      placed++;
    }
    long free = names.stream().mapToLong(n -> ledger.view(n).orElseThrow().gpuFree()).sum();
    return new Result(seed, (capacity - free) / (double) capacity, placed, skipped);
  }

  /** A trace task as the extender reads a pod: a share of one GPU, whole GPUs, or none. */
  static GpuAsk ask(Task task) {
    var ask =
        switch (task.kind()) {
          case NONE -> GpuAsk.NONE;
          case SHARE -> GpuAsk.share(task.perGpu());
          case WHOLE -> GpuAsk.whole(task.gpus());
        };
    return ask.with(task.cpuMilli(), task.models());
  }

  /** The built-in policy with the trace's strategy: whole GPUs first-fit (the trace has no topology). */
  private static GpuPolicy withStrategy(String strategy) {
    try {
      return PolicyParser.parse("allocator:\n  wholeGpu: first-fit\n  memoryShare: " + strategy + "\n");
    } catch (io.gpuadmission.policy.InvalidPolicyException e) {
      throw new IllegalArgumentException("unknown strategy " + strategy + ": " + e.getMessage(), e);
    }
  }


  /** Baselines that are not product strategies (random, best-fit) call the allocator directly. */
  private Result runBaseline(String policyName, List<Task> tasks, long seed, long capacity) {
    var policy = policy(policyName, seed);
    var nodes = new ArrayList<>(cluster);
    var placed = 0;
    var skipped = 0;
    for (var task : tasks) {
      var placement = policy.place(nodes, task);
      if (placement.isEmpty()) {
        skipped++;
        continue;
      }
      var p = placement.get();
      nodes.set(p.node(), nodes.get(p.node()).after(task, p.gpus()));
      placed++;
    }
    long free = nodes.stream().mapToLong(NodeGpus::gpuFree).sum();
    return new Result(seed, (capacity - free) / (double) capacity, placed, skipped);
  }

  private PlacementPolicy policy(String name, long seed) {
    var whole = new FirstFitStrategy();
    return switch (name) {
      case "best-fit" -> new HeuristicPolicy(HeuristicPolicy.Kind.BEST_FIT, whole);
      case "random" -> new RandomPolicy(new Random(seed * 31 + 7), whole);
      default -> throw new IllegalArgumentException("unknown policy " + name + " (binpack, spread, best-fit, fgd, random)");
    };
  }

  private static long gpuRequest(Task task) {
    return task.gpus() * task.perGpu();
  }

  static List<NodeGpus> readNodes(Path file) throws IOException {
    var nodes = new ArrayList<NodeGpus>();
    var lines = Files.readAllLines(file);
    var header = Arrays.asList(lines.get(0).split(","));
    for (var line : lines.subList(1, lines.size())) {
      var cells = line.split(",", -1);
      var cpu = Long.parseLong(cells[header.indexOf("cpu_milli")]);
      var count = Integer.parseInt(cells[header.indexOf("gpu")]);
      var model = cells[header.indexOf("model")];
      var gpus = new ArrayList<GpuDevice>();
      for (int g = 0; g < count; g++) {
        gpus.add(new GpuDevice(g, model, GPU, 0, true));
      }
      nodes.add(new NodeGpus(cells[header.indexOf("sn")], gpus, Optional.empty(), cpu, cpu));
    }
    return nodes;
  }

  static List<Task> readPods(Path file) throws IOException {
    var tasks = new ArrayList<Task>();
    var lines = Files.readAllLines(file);
    var header = Arrays.asList(lines.get(0).split(","));
    var specColumn = header.indexOf("gpu_spec");
    for (var line : lines.subList(1, lines.size())) {
      var cells = line.split(",", -1);
      var gpus = Integer.parseInt(cells[header.indexOf("num_gpu")]);
      var milli = Long.parseLong(cells[header.indexOf("gpu_milli")]);
      var spec = specColumn < 0 || specColumn >= cells.length ? "" : cells[specColumn];
      // Set.copyOf, not Set.of: the trace's gpu_spec may name a model twice ("V100M16|V100M16").
      var models = spec.isEmpty() ? Set.<String>of() : Set.copyOf(Arrays.asList(spec.split("\\|")));
      var cpu = Long.parseLong(cells[header.indexOf("cpu_milli")]);
      // The trace counts a GPU as 1000 milli: less of one GPU is a share, else whole GPUs.
      var task =
          gpus == 0 ? Task.none(cpu)
              : gpus == 1 && milli < GPU ? Task.share(cpu, milli)
              : new Task(Task.Kind.WHOLE, cpu, gpus, milli, Set.of());
      tasks.add(task.withModels(models));
    }
    return tasks;
  }

  public static void main(String[] args) throws IOException {
    String nodes = null;
    String pods = null;
    var policy = "fgd";
    var seeds = "42-51";
    var demand = 1.3;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--nodes" -> nodes = args[i + 1];
        case "--pods" -> pods = args[i + 1];
        case "--policy" -> policy = args[i + 1];
        case "--seeds" -> seeds = args[i + 1];
        case "--demand" -> demand = Double.parseDouble(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (nodes == null || pods == null) {
      System.err.println("usage: --nodes FILE --pods FILE [--policy fgd] [--seeds 42-51] [--demand 1.3]");
      System.exit(2);
    }
    var simulator = load(Path.of(nodes), Path.of(pods));
    var range = seeds.split("-");
    long first = Long.parseLong(range[0]);
    long last = range.length > 1 ? Long.parseLong(range[1]) : first;
    double sum = 0;
    for (long seed = first; seed <= last; seed++) {
      var started = System.nanoTime();
      var r = simulator.run(policy, seed, demand);
      sum += r.allocationRatio();
      System.out.printf(
          "seed=%d allocation_ratio=%.4f placed=%d skipped=%d seconds=%.1f%n",
          seed, r.allocationRatio(), r.placed(), r.skipped(), (System.nanoTime() - started) / 1e9);
    }
    System.out.printf("mean_allocation_ratio=%.4f policy=%s pods=%s%n", sum / (last - first + 1), policy, pods);
  }
}
