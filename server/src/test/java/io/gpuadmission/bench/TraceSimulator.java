package io.gpuadmission.bench;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.allocator.FirstFitStrategy;
import io.gpuadmission.allocator.GpuDevice;
import io.gpuadmission.allocator.HeuristicPolicy;
import io.gpuadmission.allocator.NodeGpus;
import io.gpuadmission.allocator.PlacementPolicy;
import io.gpuadmission.allocator.RandomPolicy;
import io.gpuadmission.allocator.Task;
import io.gpuadmission.allocator.TaskDistribution;
import io.gpuadmission.extender.WireExtender;
import io.gpuadmission.kubescheduler.KubeSchedulerModel;
import io.gpuadmission.kubescheduler.SchedulerConfiguration;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.GpuNodeCapacity;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.TargetWorkload;
import io.gpuadmission.placement.WorkloadLearner;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.PolicyParser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Replays the Alibaba GPU trace the way the FGD paper's evaluation does: shuffle the tasks with a
 * seed, add copies of random tasks until the total GPU request reaches 130 % of the cluster's
 * GPUs, place them one by one with no departures (a task that fits nowhere is skipped), and report
 * the cluster's GPU allocation ratio. GPUs count in milli-GPU (1000 each). Two setups:
 *
 * <ul>
 *   <li>{@code service} (the default): what users get. Each task is a pod as kube-scheduler sees
 *       it (CPU and memory requests; {@code aliyun.com/gpu-mem} in milli-GPU for a share, {@code
 *       nvidia.com/gpu} for whole GPUs), each node a Node with its allocatable resources and GPU
 *       labels. kube-scheduler's own filters (CPU, memory, GPU totals, pod count) decide which
 *       nodes the extender is asked about; GPU pods go through this service's extender over its
 *       JSON API ({@link WireExtender}: its ledger, which counts GPUs only, and FGD's learned
 *       workload); CPU-only pods never reach the extender (its {@code managedResources}) and go
 *       where kube-scheduler's scorers put them. {@code --through simulator} takes the extender's
 *       own top node among all feasible nodes (what the allocator chooses); {@code --through
 *       kube-scheduler} takes the node {@link KubeSchedulerModel} picks with the scheduler
 *       configuration (by default the shipped second scheduler's: its weight, plugins and {@code
 *       percentageOfNodesToScore}). {@code --workload oracle} hands FGD the trace's whole
 *       distribution instead of the learned one (reference only: no cluster knows it).
 *   <li>{@code paper}: the paper's own setup, as this simulator first reproduced it: every task,
 *       CPU-only ones included, placed by the policy over all nodes, CPU counted in the ledger and
 *       in FGD's measure, FGD given the trace's distribution (or {@code --workload learned}).
 * </ul>
 *
 * <p>{@code --tasks shares} keeps only the tasks that ask a share of one GPU (before the copies
 * are added); {@code gpushare} is ACK's gpushare extender through the same kube-scheduler model.
 * {@code --sample 12,10} runs on every 12th node (by GPU model and count) and every 10th task, the
 * sample {@code TraceSimulatorTest} pins; {@code --write-sample DIR} writes the nodes, tasks and
 * each seed's arrival order instead of running, for a replay through a real kube-scheduler;
 * {@code --placements DIR} writes where each pod went ({@code DIR/<seed>.txt}, one node a line in
 * arrival order, empty when skipped; service setup), so that two ways of choosing can be compared
 * pod by pod. {@code --replay FILE} takes the arrival order from a live sample's {@code
 * replay.csv} (the seed then drives only kube-scheduler's random pick), and {@code
 * --memory-requests off --max-pods 256} make the pods (CPU request only) and nodes of that replay
 * ({@link Options#liveReplay}).
 *
 * <p>Usage: {@code TraceSimulator --nodes FILE --pods FILE --policy
 * binpack|spread|fgd|fgd-cpu|fgd-lookahead|gpushare|best-fit|random [--setup service|paper] [--through
 * simulator|kube-scheduler] [--workload learned|oracle] [--tasks all|shares] [--scheduler-config
 * FILE] [--extender-weight N] [--percentage-of-nodes-to-score N] [--seeds 42-51] [--demand 1.3]
 * [--placements DIR]}
 */
public final class TraceSimulator {
  static final long GPU = 1000;
  static final long MIB = 1024 * 1024;
  /** The kubelet's default maxPods. */
  static final long MAX_PODS = 110;
  /** The shipped second scheduler, under the project root ({@code bench/simulate-trace.sh} says where that is). */
  static final Path SHIPPED_SCHEDULER =
      Path.of(System.getProperty("gpu-admission.root", "."), "manifests/components/scheduler/scheduler-config.yaml");

  /** The outcome of one run. */
  /** The outcome of one run; {@code nodes}: where each pod went, in arrival order ("" when skipped; service setup only). */
  public record Result(long seed, double allocationRatio, int placed, int skipped, List<String> nodes) {
    public Result {
      nodes = List.copyOf(nodes);
    }

    Result(long seed, double allocationRatio, int placed, int skipped) {
      this(seed, allocationRatio, placed, skipped, List.of());
    }

    /** Ratio, placed and skipped, as the tests pin them. */
    public String figures() {
      return String.format("%.4f %d %d", allocationRatio, placed, skipped);
    }
  }

  /** A node of the trace. */
  record TraceNode(String name, long milliCpu, long memoryMib, int gpus, String model) {}

  /** A task of the trace: its name, the allocator's task and the memory it requests. */
  record TracePod(String name, Task task, long memoryMib) {}

  /** How a run is set up (see the class comment). */
  public record Options(
      String policy,
      String setup,
      String through,
      String workload,
      String tasks,
      String cpuPods,
      String memoryRequests,
      long maxPods,
      SchedulerConfiguration scheduler) {
    public static Options service(String policy, String through, SchedulerConfiguration scheduler) {
      return new Options(policy, "service", through, "learned", "all", "off-gpu-nodes", "on", MAX_PODS, scheduler);
    }

    /**
     * What {@code ../shared/data/live-sample-*} replayed through a real kube-scheduler: pods with a
     * CPU request and no memory request, nodes that take 256 pods, share tasks only.
     */
    public static Options liveReplay(String policy, String through, SchedulerConfiguration scheduler) {
      return service(policy, through, scheduler).with("memory-requests", "off").with("max-pods", "256");
    }

    public Options with(String key, String value) {
      return switch (key) {
        case "policy" -> new Options(value, setup, through, workload, tasks, cpuPods, memoryRequests, maxPods, scheduler);
        case "setup" -> new Options(policy, value, through, workload, tasks, cpuPods, memoryRequests, maxPods, scheduler);
        case "through" -> new Options(policy, setup, value, workload, tasks, cpuPods, memoryRequests, maxPods, scheduler);
        case "workload" -> new Options(policy, setup, through, value, tasks, cpuPods, memoryRequests, maxPods, scheduler);
        case "tasks" -> new Options(policy, setup, through, workload, value, cpuPods, memoryRequests, maxPods, scheduler);
        case "cpu-pods" -> new Options(policy, setup, through, workload, tasks, value, memoryRequests, maxPods, scheduler);
        case "memory-requests" -> {
          if (!value.equals("on") && !value.equals("off")) {
            throw new IllegalArgumentException("unknown --memory-requests " + value + " (on, off)");
          }
          yield new Options(policy, setup, through, workload, tasks, cpuPods, value, maxPods, scheduler);
        }
        case "max-pods" -> new Options(policy, setup, through, workload, tasks, cpuPods, memoryRequests, Long.parseLong(value), scheduler);
        default -> throw new IllegalArgumentException("unknown option --" + key);
      };
    }

    public Options with(SchedulerConfiguration configuration) {
      return new Options(policy, setup, through, workload, tasks, cpuPods, memoryRequests, maxPods, configuration);
    }

    /** Policy {@code cpuPods.keepOffGpuNodes} (the default): CPU-only pods never go to GPU nodes. */
    boolean cpuPodsOffGpuNodes() {
      return switch (cpuPods) {
        case "off-gpu-nodes" -> true;
        case "kube-scheduler" -> false;
        default -> throw new IllegalArgumentException("unknown --cpu-pods " + cpuPods + " (off-gpu-nodes, kube-scheduler)");
      };
    }

    /** Whether each pod requests the trace's memory (on) or only CPU besides its GPUs (off). */
    boolean requestsMemory() {
      return memoryRequests.equals("on");
    }
  }

  private final List<TraceNode> nodes;
  private final List<TracePod> pods;
  /** The arrival order a replay file fixes (task names, copies included); empty: shuffled with the seed. */
  private final Optional<List<String>> replay;

  TraceSimulator(List<TraceNode> nodes, List<TracePod> pods) {
    this(nodes, pods, Optional.empty());
  }

  private TraceSimulator(List<TraceNode> nodes, List<TracePod> pods, Optional<List<String>> replay) {
    this.nodes = List.copyOf(nodes);
    this.pods = List.copyOf(pods);
    this.replay = replay.map(List::copyOf);
  }

  /**
   * This simulator with the arrival order of {@code file} (a live sample's {@code replay.csv}:
   * column {@code task} names a task of the pod list, copies repeated), the same for every seed:
   * the seed then only drives kube-scheduler's random pick among equal totals.
   */
  public TraceSimulator replaying(Path file) throws IOException {
    var lines = Files.readAllLines(file);
    var header = Arrays.asList(lines.get(0).split(","));
    var column = header.indexOf("task");
    if (column < 0) {
      throw new IllegalArgumentException(file + ": no column \"task\" in " + lines.get(0));
    }
    var known = new java.util.HashSet<String>();
    pods.forEach(p -> known.add(p.name()));
    var order = new ArrayList<String>(lines.size() - 1);
    for (var line : lines.subList(1, lines.size())) {
      var name = line.split(",", -1)[column];
      if (!known.contains(name)) {
        throw new IllegalArgumentException(file + ": task " + name + " is not in the pod list");
      }
      order.add(name);
    }
    return new TraceSimulator(nodes, pods, Optional.of(order));
  }

  public static TraceSimulator load(Path nodes, Path pods) throws IOException {
    return new TraceSimulator(readNodes(nodes), readTrace(pods));
  }

  /**
   * A smaller cluster of the same make: every {@code nodeStep}-th node in the order of GPU model,
   * GPU count and name (each kind of node in proportion), and every {@code podStep}-th task.
   */
  public TraceSimulator sample(int nodeStep, int podStep) {
    var sorted = new ArrayList<>(nodes);
    sorted.sort(java.util.Comparator.comparing(TraceNode::model).thenComparingInt(TraceNode::gpus).thenComparing(TraceNode::name));
    var sampledNodes = new ArrayList<TraceNode>();
    for (int i = 0; i < sorted.size(); i += nodeStep) {
      sampledNodes.add(sorted.get(i));
    }
    var sampledPods = new ArrayList<TracePod>();
    for (int i = 0; i < pods.size(); i += podStep) {
      sampledPods.add(pods.get(i));
    }
    return new TraceSimulator(sampledNodes, sampledPods, Optional.empty());
  }

  /** The shipped second scheduler's configuration (profile gpu-scheduler). */
  public static SchedulerConfiguration shippedScheduler() throws IOException {
    return SchedulerConfiguration.readConfigMap(SHIPPED_SCHEDULER, "config.yaml", "gpu-scheduler");
  }

  /** The paper's setup with the trace's distribution (the figures this simulator first reproduced). */
  public Result run(String policyName, long seed, double demand) {
    return run(new Options(policyName, "paper", "simulator", "oracle", "all", "kube-scheduler", "on", MAX_PODS, null), seed, demand);
  }

  /** The tasks of a run in the order they arrive: shuffled with the seed, then copies up to {@code demand}. */
  List<TracePod> arrivals(String tasks, long seed, double demand) {
    var workload = workload(tasks);
    if (replay.isPresent()) {
      var byName = new HashMap<String, TracePod>();
      workload.forEach(p -> byName.put(p.name(), p));
      return replay.get().stream()
          .map(name -> {
            var pod = byName.get(name);
            if (pod == null) {
              throw new IllegalArgumentException("the replay's task " + name + " is not among --tasks " + tasks);
            }
            return pod;
          })
          .toList();
    }
    var random = new Random(seed);
    var arrivals = new ArrayList<>(workload);
    Collections.shuffle(arrivals, random);
    long capacity = nodes.stream().mapToLong(n -> n.gpus() * GPU).sum();
    long requested = arrivals.stream().mapToLong(p -> gpuRequest(p.task())).sum();
    while (requested < demand * capacity) {
      var copy = workload.get(random.nextInt(workload.size()));
      arrivals.add(copy);
      requested += gpuRequest(copy.task());
    }
    return arrivals;
  }

  private List<TracePod> workload(String tasks) {
    return switch (tasks) {
      case "all" -> pods;
      case "shares" -> pods.stream().filter(p -> p.task().isShare()).toList();
      default -> throw new IllegalArgumentException("unknown --tasks " + tasks + " (all, shares)");
    };
  }

  public Result run(Options options, long seed, double demand) {
    var workload = workload(options.tasks());
    var arrivals = arrivals(options.tasks(), seed, demand);
    long capacity = nodes.stream().mapToLong(n -> n.gpus() * GPU).sum();
    var oracle = TaskDistribution.of(workload.stream().map(TracePod::task).filter(t -> t.gpus() > 0).toList());
    return switch (options.setup()) {
      case "paper" -> switch (options.policy()) {
        case "binpack", "spread", "fgd" -> runPaper(options, arrivals, oracle, seed, capacity);
        default -> runBaseline(options.policy(), arrivals, seed, capacity);
      };
      case "service" -> runService(options, arrivals, oracle, seed, capacity);
      default -> throw new IllegalArgumentException("unknown setup " + options.setup() + " (service, paper)");
    };
  }

  /**
   * What users get: kube-scheduler's filters, this service's extender over its JSON API (or
   * gpushare's), and the node the allocator or kube-scheduler picks.
   */
  private Result runService(Options options, List<TracePod> arrivals, TaskDistribution oracle, long seed, long capacity) {
    var choice =
        switch (options.through()) {
          case "simulator" -> KubeSchedulerModel.Choice.EXTENDER;
          case "kube-scheduler" -> KubeSchedulerModel.Choice.KUBE_SCHEDULER;
          default -> throw new IllegalArgumentException("unknown --through " + options.through() + " (simulator, kube-scheduler)");
        };
    var config = options.scheduler();
    KubeSchedulerModel.Extender extender;
    WireExtender wire = null;
    if (options.policy().equals("gpushare")) {
      var free = new HashMap<String, long[]>();
      nodes.forEach(n -> {
        var gpus = new long[n.gpus()];
        Arrays.fill(gpus, GPU);
        free.put(n.name(), gpus);
      });
      extender = new GpushareModel(free);
      // gpushare's own stanza: filter and bind, no prioritize, aliyun.com/gpu-mem only.
      config =
          new SchedulerConfiguration(
              config.plugins(),
              config.percentageOfNodesToScore(),
              Optional.of(new SchedulerConfiguration.Extender("gpushare", 1, List.of(GpushareModel.RESOURCE), true, false, true)));
    } else {
      var given = options.workload().equals("oracle") ? Optional.<Supplier<TargetWorkload>>of(fixed(asks(oracle))) : Optional.<Supplier<TargetWorkload>>empty();
      wire = new WireExtender(strategyPolicy(options.policy()), nodeObjects(), given, choice == KubeSchedulerModel.Choice.KUBE_SCHEDULER);
      extender = wire;
    }
    var model = new KubeSchedulerModel(config, modelNodes(options.maxPods()), Optional.of(extender), seed * 7919 + 17, choice);
    var placed = 0;
    var skipped = 0;
    long allocated = 0;
    var where = new ArrayList<String>(arrivals.size());
    for (int i = 0; i < arrivals.size(); i++) {
      var task = arrivals.get(i);
      var pod = pod(i, task, options.requestsMemory());
      if (wire != null) {
        wire.created(pod);
      }
      var node = model.schedule(modelPod(pod, task, options.cpuPodsOffGpuNodes(), options.requestsMemory()));
      where.add(node.orElse(""));
      if (node.isEmpty()) {
        skipped++;
        continue;
      }
      placed++;
      allocated += gpuRequest(task.task());
    }
    if (wire != null) {
      var ledger = wire.ledger();
      long free = nodes.stream().mapToLong(n -> ledger.view(n.name()).orElseThrow().gpuFree()).sum();
      if (capacity - free != allocated) {
        throw new IllegalStateException("the ledger holds " + (capacity - free) + " milli-GPU, the pods placed ask " + allocated);
      }
    }
    return new Result(seed, allocated / (double) capacity, placed, skipped, where);
  }

  /** The trace's distribution as the extender reads asks: GPUs and CPU, any model. */
  private static TaskDistribution asks(TaskDistribution tasks) {
    var weights = new LinkedHashMap<Task, Double>();
    for (int i = 0; i < tasks.size(); i++) {
      var t = tasks.task(i);
      weights.merge(t.isShare() ? Task.share(t.cpuMilli(), t.perGpu()) : Task.whole(t.cpuMilli(), t.gpus()), tasks.probability(i), Double::sum);
    }
    return TaskDistribution.weighted(weights);
  }

  private static Supplier<TargetWorkload> fixed(TaskDistribution distribution) {
    var workload = TargetWorkload.given(distribution);
    return () -> workload;
  }

  /**
   * The paper's setup through the extender's decision code: the GPU ledger holds the nodes with
   * their CPU, {@link PlacementDecider#best} is the node prioritize ranks first, {@link
   * PlacementDecider#choose} the GPUs bind picks, and the ledger's reservation records them.
   */
  private Result runPaper(Options options, List<TracePod> arrivals, TaskDistribution oracle, long seed, long capacity) {
    var ledger = new GpuLedger();
    var names = new ArrayList<String>(nodes.size());
    for (var node : nodes) {
      ledger.putNode(new GpuNodeCapacity(node.name(), node.model(), Collections.nCopies(node.gpus(), GPU), Optional.empty(), node.milliCpu()));
      names.add(node.name());
    }
    var policy = strategyPolicy(options.policy());
    var learner = new WorkloadLearner(Clock.systemUTC(), () -> Duration.ofHours(1));
    var decider = new PlacementDecider(ledger, () -> policy, options.workload().equals("oracle") ? fixed(oracle) : learner);
    var placed = 0;
    var skipped = 0;
    for (int i = 0; i < arrivals.size(); i++) {
      var task = arrivals.get(i).task();
      var ask = ask(task);
      learner.seen("task-" + i, ask);
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
  static GpuPolicy strategyPolicy(String strategy) {
    try {
      return PolicyParser.parse("allocator:\n  wholeGpu: first-fit\n  memoryShare: " + strategy + "\n");
    } catch (io.gpuadmission.policy.InvalidPolicyException e) {
      throw new IllegalArgumentException("unknown strategy " + strategy + ": " + e.getMessage(), e);
    }
  }

  /** The trace's nodes as Node objects, for the extender's own node mapping: 1000 units per GPU. */
  private List<Node> nodeObjects() {
    var out = new ArrayList<Node>(nodes.size());
    for (var n : nodes) {
      out.add(
          new NodeBuilder()
              .withNewMetadata()
              .withName(n.name())
              .addToLabels("aliyun.accelerator/nvidia_name", n.model())
              .addToLabels("aliyun.accelerator/nvidia_count", Integer.toString(n.gpus()))
              .addToAnnotations("gpu-admission.io/gpu-memory", String.join(",", Collections.nCopies(n.gpus(), Long.toString(GPU))))
              .endMetadata()
              .withNewStatus()
              .addToAllocatable("cpu", new Quantity(n.milliCpu() + "m"))
              .addToAllocatable("memory", new Quantity(n.memoryMib() + "Mi"))
              .addToAllocatable(GpushareModel.RESOURCE, new Quantity(Long.toString(n.gpus() * GPU)))
              .addToAllocatable("nvidia.com/gpu", new Quantity(Integer.toString(n.gpus())))
              .endStatus()
              .build());
    }
    return out;
  }

  /** The nodes as kube-scheduler's cache holds them. */
  private List<KubeSchedulerModel.Node> modelNodes(long maxPods) {
    var out = new ArrayList<KubeSchedulerModel.Node>(nodes.size());
    for (var n : nodes) {
      out.add(
          new KubeSchedulerModel.Node(
              n.name(), n.model(), n.milliCpu(), n.memoryMib() * MIB, maxPods,
              Map.of(GpushareModel.RESOURCE, n.gpus() * GPU, "nvidia.com/gpu", (long) n.gpus())));
    }
    return out;
  }

  /** Task {@code i} as the pod a user would create (requests equal limits; its GPU models as required node affinity). */
  static Pod pod(int i, TracePod task, boolean requestsMemory) {
    var resources = new LinkedHashMap<String, Quantity>();
    resources.put("cpu", new Quantity(task.task().cpuMilli() + "m"));
    if (requestsMemory) {
      resources.put("memory", new Quantity(task.memoryMib() + "Mi"));
    }
    if (task.task().isShare()) {
      resources.put(GpushareModel.RESOURCE, new Quantity(Long.toString(task.task().perGpu())));
    } else if (task.task().isWhole()) {
      resources.put("nvidia.com/gpu", new Quantity(Integer.toString(task.task().gpus())));
    }
    var spec = new io.fabric8.kubernetes.api.model.PodSpecBuilder();
    if (!task.task().models().isEmpty()) {
      // gpu_spec as a user asks for GPU models: required node affinity on the model label.
      spec.withNewAffinity()
          .withNewNodeAffinity()
          .withNewRequiredDuringSchedulingIgnoredDuringExecution()
          .addNewNodeSelectorTerm()
          .addNewMatchExpression()
          .withKey("aliyun.accelerator/nvidia_name")
          .withOperator("In")
          .withValues(List.copyOf(new java.util.TreeSet<>(task.task().models())))
          .endMatchExpression()
          .endNodeSelectorTerm()
          .endRequiredDuringSchedulingIgnoredDuringExecution()
          .endNodeAffinity()
          .endAffinity();
    }
    return new PodBuilder()
        .withNewMetadata()
        .withName("task-" + i)
        .withNamespace("trace")
        .withUid("uid-" + i)
        .endMetadata()
        .withNewSpecLike(spec.build())
        .addNewContainer()
        .withName("task")
        .withImage("trace")
        .withNewResources()
        .withRequests(resources)
        .withLimits(resources)
        .endResources()
        .endContainer()
        .endSpec()
        .withNewStatus()
        .withPhase("Pending")
        .endStatus()
        .build();
  }

  private static KubeSchedulerModel.Pod modelPod(Pod pod, TracePod task, boolean cpuPodsOffGpuNodes, boolean requestsMemory) {
    var scalars = new HashMap<String, Long>();
    if (task.task().isShare()) {
      scalars.put(GpushareModel.RESOURCE, task.task().perGpu());
    } else if (task.task().isWhole()) {
      scalars.put("nvidia.com/gpu", (long) task.task().gpus());
    }
    var offGpuNodes = cpuPodsOffGpuNodes && task.task().gpus() == 0;
    return new KubeSchedulerModel.Pod(
        pod.getMetadata().getName(), task.task().cpuMilli(), requestsMemory ? task.memoryMib() * MIB : 0, scalars, task.task().models(), offGpuNodes, pod);
  }

  /** Baselines that are not product strategies (random, best-fit) call the allocator directly. */
  private Result runBaseline(String policyName, List<TracePod> arrivals, long seed, long capacity) {
    var policy = policy(policyName, seed);
    var cluster = new ArrayList<NodeGpus>(nodes.size());
    for (var n : nodes) {
      var gpus = new ArrayList<GpuDevice>();
      for (int g = 0; g < n.gpus(); g++) {
        gpus.add(new GpuDevice(g, n.model(), GPU, 0, true));
      }
      cluster.add(new NodeGpus(n.name(), gpus, Optional.empty(), n.milliCpu(), n.milliCpu()));
    }
    var placed = 0;
    var skipped = 0;
    for (var arrival : arrivals) {
      var task = arrival.task();
      var placement = policy.place(cluster, task);
      if (placement.isEmpty()) {
        skipped++;
        continue;
      }
      var p = placement.get();
      cluster.set(p.node(), cluster.get(p.node()).after(task, p.gpus()));
      placed++;
    }
    long free = cluster.stream().mapToLong(NodeGpus::gpuFree).sum();
    return new Result(seed, (capacity - free) / (double) capacity, placed, skipped);
  }

  private PlacementPolicy policy(String name, long seed) {
    var whole = new FirstFitStrategy();
    return switch (name) {
      case "best-fit" -> new HeuristicPolicy(HeuristicPolicy.Kind.BEST_FIT, whole);
      case "random" -> new RandomPolicy(new Random(seed * 31 + 7), whole);
      default -> throw new IllegalArgumentException("unknown policy " + name + " (binpack, spread, fgd, fgd-cpu, fgd-lookahead, gpushare, best-fit, random)");
    };
  }

  private static long gpuRequest(Task task) {
    return task.gpus() * task.perGpu();
  }

  static List<TraceNode> readNodes(Path file) throws IOException {
    var out = new ArrayList<TraceNode>();
    var lines = Files.readAllLines(file);
    var header = Arrays.asList(lines.get(0).split(","));
    for (var line : lines.subList(1, lines.size())) {
      var cells = line.split(",", -1);
      out.add(
          new TraceNode(
              cells[header.indexOf("sn")],
              Long.parseLong(cells[header.indexOf("cpu_milli")]),
              Long.parseLong(cells[header.indexOf("memory_mib")]),
              Integer.parseInt(cells[header.indexOf("gpu")]),
              cells[header.indexOf("model")]));
    }
    return out;
  }

  /** The trace's nodes as the allocator sees them, CPU counted (the allocator benchmarks' cluster). */
  static List<NodeGpus> readCluster(Path file) throws IOException {
    var cluster = new ArrayList<NodeGpus>();
    for (var n : readNodes(file)) {
      var gpus = new ArrayList<GpuDevice>();
      for (int g = 0; g < n.gpus(); g++) {
        gpus.add(new GpuDevice(g, n.model(), GPU, 0, true));
      }
      cluster.add(new NodeGpus(n.name(), gpus, Optional.empty(), n.milliCpu(), n.milliCpu()));
    }
    return cluster;
  }

  /**
   * Writes what a replay through a real kube-scheduler needs to place the same pods in the same
   * order: the nodes ({@code nodes.csv}) and tasks ({@code pods.csv}) in the trace's columns, and
   * for each seed the arrivals in order ({@code arrivals-<seed>.csv}: position, task name, and its
   * requests), copies included.
   */
  void write(Path dir, String tasks, long first, long last, double demand) throws IOException {
    Files.createDirectories(dir);
    var nodeLines = new ArrayList<String>(List.of("sn,cpu_milli,memory_mib,gpu,model"));
    nodes.forEach(n -> nodeLines.add(n.name() + "," + n.milliCpu() + "," + n.memoryMib() + "," + n.gpus() + "," + n.model()));
    Files.write(dir.resolve("nodes.csv"), nodeLines);
    var podLines = new ArrayList<String>(List.of("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec"));
    workload(tasks).forEach(p -> podLines.add(line(p)));
    Files.write(dir.resolve("pods.csv"), podLines);
    for (long seed = first; seed <= last; seed++) {
      var lines = new ArrayList<String>(List.of("position,name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec"));
      var arrivals = arrivals(tasks, seed, demand);
      for (int i = 0; i < arrivals.size(); i++) {
        lines.add(i + "," + line(arrivals.get(i)));
      }
      Files.write(dir.resolve("arrivals-" + seed + ".csv"), lines);
    }
  }

  private static String line(TracePod p) {
    var t = p.task();
    var milli = t.isShare() ? t.perGpu() : t.isWhole() ? GPU : 0;
    return p.name() + "," + t.cpuMilli() + "," + p.memoryMib() + "," + t.gpus() + "," + milli + "," + String.join("|", new java.util.TreeSet<>(t.models()));
  }

  static List<Task> readPods(Path file) throws IOException {
    return readTrace(file).stream().map(TracePod::task).toList();
  }

  static List<TracePod> readTrace(Path file) throws IOException {
    var tasks = new ArrayList<TracePod>();
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
      tasks.add(new TracePod(cells[header.indexOf("name")], task.withModels(models), Long.parseLong(cells[header.indexOf("memory_mib")])));
    }
    return tasks;
  }

  public static void main(String[] args) throws IOException {
    String nodes = null;
    String pods = null;
    var options = Options.service("fgd", "simulator", null);
    var seeds = "42-51";
    var demand = 1.3;
    Path schedulerConfig = null;
    String sample = null;
    Path writeSample = null;
    Path placements = null;
    Path replayFile = null;
    Long weight = null;
    Integer percentage = null;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--nodes" -> nodes = args[i + 1];
        case "--pods" -> pods = args[i + 1];
        case "--policy", "--setup", "--through", "--workload", "--tasks", "--cpu-pods", "--memory-requests", "--max-pods" ->
            options = options.with(args[i].substring(2), args[i + 1]);
        case "--replay" -> replayFile = Path.of(args[i + 1]);
        case "--scheduler-config" -> schedulerConfig = Path.of(args[i + 1]);
        case "--extender-weight" -> weight = Long.parseLong(args[i + 1]);
        case "--percentage-of-nodes-to-score" -> percentage = Integer.parseInt(args[i + 1]);
        case "--seeds" -> seeds = args[i + 1];
        case "--sample" -> sample = args[i + 1];
        case "--write-sample" -> writeSample = Path.of(args[i + 1]);
        case "--placements" -> placements = Path.of(args[i + 1]);
        case "--demand" -> demand = Double.parseDouble(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (nodes == null || pods == null) {
      System.err.println(
          "usage: --nodes FILE --pods FILE [--policy fgd] [--setup service|paper] [--through simulator|kube-scheduler]"
              + " [--workload learned|oracle] [--tasks all|shares] [--cpu-pods off-gpu-nodes|kube-scheduler]"
              + " [--memory-requests on|off] [--max-pods 110] [--replay FILE]"
              + " [--scheduler-config FILE] [--extender-weight N]"
              + " [--percentage-of-nodes-to-score N] [--seeds 42-51] [--demand 1.3] [--sample NODE_STEP,TASK_STEP]"
              + " [--write-sample DIR] [--placements DIR]");
      System.exit(2);
    }
    var scheduler = schedulerConfig == null ? shippedScheduler() : SchedulerConfiguration.read(schedulerConfig);
    if (weight != null) {
      scheduler = scheduler.withExtenderWeight(weight);
    }
    if (percentage != null) {
      scheduler = scheduler.withPercentageOfNodesToScore(percentage);
    }
    options = options.with(scheduler);
    var simulator = load(Path.of(nodes), Path.of(pods));
    if (replayFile != null) {
      simulator = simulator.replaying(replayFile);
    }
    if (sample != null) {
      var steps = sample.split(",");
      simulator = simulator.sample(Integer.parseInt(steps[0]), Integer.parseInt(steps[1]));
    }
    var range = seeds.split("-");
    long first = Long.parseLong(range[0]);
    long last = range.length > 1 ? Long.parseLong(range[1]) : first;
    if (writeSample != null) {
      simulator.write(writeSample, options.tasks(), first, last, demand);
      System.out.println("wrote " + writeSample.resolve("nodes.csv") + ", pods.csv and arrivals-" + first + ".csv to arrivals-" + last + ".csv");
      return;
    }
    double sum = 0;
    for (long seed = first; seed <= last; seed++) {
      var started = System.nanoTime();
      var r = simulator.run(options, seed, demand);
      sum += r.allocationRatio();
      if (placements != null) {
        Files.createDirectories(placements);
        Files.write(placements.resolve(seed + ".txt"), r.nodes());
      }
      System.out.printf(
          "seed=%d allocation_ratio=%.4f placed=%d skipped=%d seconds=%.1f%n",
          seed, r.allocationRatio(), r.placed(), r.skipped(), (System.nanoTime() - started) / 1e9);
    }
    System.out.printf(
        "mean_allocation_ratio=%.4f policy=%s setup=%s through=%s workload=%s tasks=%s cpu_pods=%s memory_requests=%s max_pods=%d replay=%s pods=%s%n",
        sum / (last - first + 1), options.policy(), options.setup(), options.through(), options.workload(), options.tasks(), options.cpuPods(),
        options.memoryRequests(), options.maxPods(), replayFile == null ? "-" : replayFile, pods);
  }
}
