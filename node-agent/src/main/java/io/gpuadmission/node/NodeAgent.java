package io.gpuadmission.node;

import io.gpuadmission.node.api.ApiServer;
import io.gpuadmission.node.podresources.v1.AllocatableResourcesResponse;
import io.gpuadmission.contract.GpuAnnotations;
import io.grpc.StatusRuntimeException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * One node's agent: every {@code period} it asks the kubelet what each container holds, maps GPU
 * device IDs to indices and records each pod's GPUs on the pod (only pods the API server shows on
 * this node). Each round starts again from the kubelet's answer and the pods' annotations, so
 * nothing a failed round missed is lost: a kubelet restart, an API server outage or a pod deleted
 * mid-round only delay the record to a later round. Each outage is said once when it starts and
 * once when it ends; each device ID without an index is said once.
 */
public final class NodeAgent implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(NodeAgent.class);

  /** What the agent needs besides its clients. */
  public record Settings(String node, Set<String> resources, Duration period, Optional<DevicePlugin.Settings> plugin) {
    public Settings {
      resources = Set.copyOf(resources);
    }

    /** Recording only: no device plugin. */
    public Settings(String node, Set<String> resources, Duration period) {
      this(node, resources, period, Optional.empty());
    }
  }

  /** The outcome counts of one round, for tests and the health check. */
  public record Round(Instant at, boolean kubeletAnswered, Map<AllocationRecorder.Outcome, Integer> outcomes) {}

  /** The first wait before a watch that failed is made again (then doubling up to 30 s), as client-go's reflector. */
  static final Duration WATCH_BACKOFF = Duration.ofMillis(800);

  private final PodResourcesClient kubelet;
  private final DeviceIndex index;
  private final Settings settings;
  private final Clock clock;
  private final NodePods pods;
  private final AllocationRecorder recorder;
  private final ApiServer api;
  /** Set at most once: at creation, or later when whether to serve one is known ({@link #servePlugin}). */
  private volatile Optional<DevicePlugin> plugin;
  private final Set<String> saidUnmapped = new HashSet<>();
  private ScheduledExecutorService rounds;
  private String kubeletProblem;
  /** Whether the kubelet's allocatable devices were said since it last (re)connected. */
  private boolean offered;
  private boolean apiServerFailing;
  private volatile Round last;

  private NodeAgent(ApiServer api, PodResourcesClient kubelet, DeviceIndex index, Settings settings, Clock clock) {
    this.api = api;
    this.kubelet = kubelet;
    this.index = index;
    this.settings = settings;
    this.clock = clock;
    this.pods = NodePods.start(api, settings.node(), WATCH_BACKOFF);
    this.recorder = new AllocationRecorder(api, pods, clock);
    this.plugin = settings.plugin().map(p -> new DevicePlugin(api, pods, recorder, settings.node(), p));
  }

  /** The device plugin, when this agent serves one. */
  public Optional<DevicePlugin> plugin() {
    return plugin;
  }

  /**
   * Serves the device plugin from now on (when whether this node is to have one was learned after
   * the start: its Node could not be read then); the next round registers it with the kubelet.
   */
  public synchronized void servePlugin(DevicePlugin.Settings settings) {
    if (plugin.isEmpty()) {
      plugin = Optional.of(new DevicePlugin(api, pods, recorder, this.settings.node(), settings));
    }
  }

  /** Starts watching this node's pods; rounds begin with {@link #start}, or are run by hand with {@link #round}. */
  public static NodeAgent create(ApiServer api, PodResourcesClient kubelet, DeviceIndex index, Settings settings, Clock clock) {
    return new NodeAgent(api, kubelet, index, settings, clock);
  }

  /** Runs a round every period on a thread of its own. */
  public NodeAgent start() {
    LOG.infof("node agent for %s: kubelet at %s, %d GPUs in the driver's table, every %s", settings.node(), kubelet.socket(),
        index.knownGpus(), every());
    rounds = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "node-agent"));
    rounds.scheduleWithFixedDelay(this::roundSafely, 0, settings.period().toMillis(), TimeUnit.MILLISECONDS);
    return this;
  }

  /** The last round, if one has run. */
  public java.util.Optional<Round> lastRound() {
    return java.util.Optional.ofNullable(last);
  }

  public String node() {
    return settings.node();
  }

  /** Whether the agent's pod cache shows the pod. */
  boolean sees(String namespace, String name) {
    return pods.get(namespace, name).isPresent();
  }

  public boolean podsSynced() {
    return pods.synced();
  }

  private void roundSafely() {
    if (!pods.synced()) {
      // Before the first list of this node's pods every pod would look absent: nothing is recorded,
      // and the round is tried again shortly rather than a whole period later. The device plugin
      // is served all the same (registered, its devices listed): the kubelet needs it while the API
      // server is away, and without bind's choices it prefers the topology-best GPUs.
      try {
        servePluginAlone();
      } catch (RuntimeException e) {
        LOG.errorf(e, "node agent round failed");
      }
      rounds.schedule(this::roundSafely, 500, TimeUnit.MILLISECONDS);
      return;
    }
    try {
      round();
    } catch (RuntimeException e) {
      // The schedule must go on: a thrown exception would cancel it for good.
      LOG.errorf(e, "node agent round failed");
    }
  }

  private synchronized void servePluginAlone() {
    plugin.ifPresent(p -> p.round(Optional.empty()));
  }

  /** One round: the kubelet's answer, then a record on each pod whose GPUs it does not show yet. */
  public synchronized Round round() {
    var outcomes = new EnumMap<AllocationRecorder.Outcome, Integer>(AllocationRecorder.Outcome.class);
    Map<String, PodGpus> held;
    try {
      held = KubeletAllocations.of(kubelet.list(), settings.resources(), index);
    } catch (StatusRuntimeException e) {
      plugin.ifPresent(p -> p.round(Optional.empty()));
      var problem = kubelet.problem(e);
      if (kubeletProblem == null) {
        LOG.warnf("the kubelet's PodResources API at %s does not answer (%s); asking again every %s", kubelet.socket(), problem,
            every());
      }
      kubeletProblem = problem;
      return finish(false, outcomes);
    }
    var kubeletHeld = held;
    plugin.ifPresent(p -> p.round(Optional.of(kubeletHeld)));
    if (kubeletProblem != null) {
      LOG.infof("the kubelet's PodResources API answers again");
      kubeletProblem = null;
      offered = false;
    }
    if (!offered) {
      sayOffered();
    }
    var listed = new HashSet<String>();
    for (var gpus : held.values()) {
      sayUnmapped(gpus);
      var pod = pods.get(gpus.namespace(), gpus.name());
      if (pod.isEmpty() || !settings.node().equals(pod.get().node())) {
        // Not (yet) shown on this node by the API server: written in a later round, or never.
        continue;
      }
      listed.add(pod.get().uid());
      // A device without an index is a GPU the pod holds all the same: a record without it would
      // tell the ledger the pod holds fewer GPUs than it does, and free one the node cannot give.
      // Such a pod keeps bind's choice, provisional, as on a node without the agent.
      if (gpus.gpus().isEmpty() || !gpus.unmapped().isEmpty()) {
        continue;
      }
      outcomes.merge(recorder.record(pod.get(), gpus.gpus()), 1, Integer::sum);
    }
    recorder.keepOnly(listed);
    var failed = outcomes.getOrDefault(AllocationRecorder.Outcome.FAILED, 0);
    if (failed > 0 && !apiServerFailing) {
      LOG.warnf("cannot record the GPUs of %d pods: %s; trying again every %s", failed, recorder.lastFailure(), every());
    } else if (failed == 0 && apiServerFailing) {
      LOG.infof("recording the pods' GPUs again");
    }
    apiServerFailing = failed > 0;
    return finish(true, outcomes);
  }

  private String every() {
    var millis = settings.period().toMillis();
    return millis % 1000 == 0 ? millis / 1000 + "s" : millis + "ms";
  }

  private Round finish(boolean answered, Map<AllocationRecorder.Outcome, Integer> outcomes) {
    var round = new Round(clock.instant(), answered, Map.copyOf(outcomes));
    last = round;
    return round;
  }

  /**
   * Once per connection to a kubelet: the GPUs it allocates from (GetAllocatableResources), by
   * index, so that a device the driver's table cannot place is said before any pod holds it.
   */
  private void sayOffered() {
    AllocatableResourcesResponse devices;
    try {
      devices = kubelet.allocatable();
    } catch (StatusRuntimeException e) {
      LOG.debugf("GetAllocatableResources: %s", kubelet.problem(e));
      return;
    }
    offered = true;
    var indices = new java.util.TreeSet<Integer>();
    for (var resource : devices.getDevicesList()) {
      if (!settings.resources().contains(resource.getResourceName())) {
        continue;
      }
      for (var id : resource.getDeviceIdsList()) {
        var index = this.index.indexOf(id);
        if (index.isPresent()) {
          indices.add(index.getAsInt());
        } else if (saidUnmapped.add(id)) {
          LOG.warnf("the kubelet allocates device %s, which has no GPU index: not a GPU UUID the NVIDIA driver lists, nor an"
              + " index; pods given it will not have it recorded (said once)", id);
        }
      }
    }
    LOG.infof("the kubelet allocates whole GPUs %s of %s", indices.isEmpty() ? "(none)" : GpuAnnotations.join(List.copyOf(indices)),
        String.join(", ", new java.util.TreeSet<>(settings.resources())));
  }

  private void sayUnmapped(PodGpus gpus) {
    for (var id : gpus.unmapped()) {
      if (saidUnmapped.add(id)) {
        LOG.warnf("device %s (pod %s) has no GPU index: not a GPU UUID the NVIDIA driver lists, nor an index; the pod's GPUs"
            + " are not recorded (said once)", id, gpus.key());
      }
    }
  }

  /** Device IDs said to have no index so far. */
  List<String> unmappedSaid() {
    return List.copyOf(saidUnmapped);
  }

  @Override
  public void close() {
    if (rounds != null) {
      rounds.shutdownNow();
      try {
        rounds.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    plugin.ifPresent(DevicePlugin::close);
    pods.close();
  }
}
