package io.gpuadmission.node;

import io.gpuadmission.allocator.LinkMatrix;
import io.gpuadmission.node.AdmissionGuess.Candidate;
import io.gpuadmission.node.AdmissionGuess.Match;
import io.gpuadmission.node.AdmissionGuess.Step;
import io.gpuadmission.contract.ContainerGpus;
import io.gpuadmission.contract.GpuAnnotations;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * The device plugin's decisions, from memory only (the pod cache, the device table, what it handed
 * out): which GPUs to prefer for the container being admitted, and, once the kubelet allocates,
 * whose container got them. Every API write (the pod's {@code gpu-assigned} mark) goes to {@code
 * writer}, after the kubelet has its answer.
 *
 * <p>What it handed out is kept per GPU (the pod holding it): filled by Allocate, and replaced
 * every round by what the kubelet's PodResources API says each pod holds, so an agent restart
 * starts from the truth. A GPU a live pod holds is never preferred for another.
 */
final class GpuHandover {
  private static final Logger LOG = Logger.getLogger(GpuHandover.class);
  /**
   * How long a container no bound choice fits waits for the agent's pod cache to catch up with the
   * kubelet's (the kubelet sets no deadline on GetPreferredAllocation; a pod another scheduler
   * bound pays this once per container).
   */
  static final java.time.Duration CACHE_LAG = java.time.Duration.ofSeconds(1);

  /** One pod's progress through the kubelet's admission: containers handed their GPUs, and those GPUs. */
  private record Progress(Set<String> done, Set<Integer> handed) {}

  private final NodePods pods;
  private final String node;
  private final PluginDevices devices;
  private final String resource;
  private final Set<String> wholeResources;
  private final Supplier<LinkMatrix> links;
  private final AllocationRecorder recorder;
  private final Executor writer;
  private final java.time.Duration cacheLag;
  private final Map<String, Progress> progress = new HashMap<>();
  /** Pods handed all their GPUs (or that the kubelet lists as holding some): no longer candidates. */
  private final Set<String> assigned = new HashSet<>();
  /** GPU index to the key of the pod holding it. */
  private final Map<Integer, String> holders = new HashMap<>();
  private Optional<Match> answered = Optional.empty();
  /** The GPUs the last {@link #boundChoice} could offer (the kubelet's, less those held). */
  private Set<Integer> lastAvailable = Set.of();

  GpuHandover(NodePods pods, String node, PluginDevices devices, String resource, Set<String> wholeResources, Supplier<LinkMatrix> links,
      AllocationRecorder recorder, Executor writer, java.time.Duration cacheLag) {
    this.pods = pods;
    this.node = node;
    this.devices = devices;
    this.resource = resource;
    this.wholeResources = Set.copyOf(wholeResources);
    this.links = links;
    this.recorder = recorder;
    this.writer = writer;
    this.cacheLag = cacheLag;
  }

  /** GetPreferredAllocation: bind's part for the container being admitted, else the topology-best set. */
  synchronized List<String> preferred(List<String> availableIds, List<String> mustIncludeIds, int size) {
    var mustInclude = indices(mustIncludeIds);
    var available = indices(availableIds);
    // The kubelet and this agent watch the node's pods apart: the pod being admitted may reach the
    // kubelet before the agent's cache. Wait a moment for it rather than hand that pod GPUs bind
    // did not choose; any change to the node's pods wakes the wait. The count is taken before the
    // cache is read, so a change between the two is not waited for.
    var deadline = System.nanoTime() + cacheLag.toNanos();
    Optional<Match> match;
    long seen;
    do {
      seen = pods.changes();
      match = boundChoice(available, mustInclude, size);
      // Before the first list of the node's pods (the API server away) no wait can bring a choice.
    } while (match.isEmpty() && pods.synced() && awaitChange(seen, deadline));
    answered = match;
    List<Integer> gpus;
    if (match.isPresent()) {
      gpus = match.get().gpus();
      LOG.debugf("preferring GPUs %s for %s container %s (bind's choice)", GpuAnnotations.join(gpus), match.get().key(), match.get().container());
    } else {
      gpus = BestSet.of(links.get(), lastAvailable, mustInclude, size);
      LOG.debugf("preferring GPUs %s for a container of %d GPUs that no bound choice fits", GpuAnnotations.join(gpus), size);
    }
    return uuids(gpus);
  }

  /** Bind's choice for the container being admitted, from the pod cache as it is now. */
  private Optional<Match> boundChoice(Set<Integer> kubeletAvailable, Set<Integer> mustInclude, int size) {
    var live = livePods();
    var available = new LinkedHashSet<>(kubeletAvailable);
    // A GPU a live pod holds by this plugin's record is never offered to another, whatever the
    // kubelet's list says (a kubelet that lost its checkpoint).
    available.removeIf(g -> holders.containsKey(g) && live.containsKey(holders.get(g)) && !mustInclude.contains(g));
    lastAvailable = available;
    return AdmissionGuess.preferred(candidates(live.values()), available, mustInclude, size);
  }

  private boolean awaitChange(long seen, long deadline) {
    try {
      return pods.awaitChange(seen, java.time.Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * After Allocate was answered: whose container got {@code deviceIds}. Marks the container done,
   * the GPUs held, and a pod whose containers all have theirs assigned (written by {@code writer}).
   */
  synchronized void allocated(List<String> deviceIds) {
    var live = livePods();
    var gpus = indices(deviceIds);
    var match = AdmissionGuess.allocated(candidates(live.values()), gpus, answered);
    answered = Optional.empty();
    if (match.isEmpty()) {
      LOG.infof("GPUs %s allocated to a container of a pod without a bound choice", GpuAnnotations.join(gpus.stream().sorted().toList()));
      return;
    }
    var m = match.get();
    var pod = live.get(m.key());
    var state = progress.computeIfAbsent(m.uid(), u -> new Progress(new HashSet<>(), new HashSet<>()));
    state.done().add(m.container());
    state.handed().addAll(gpus);
    gpus.forEach(g -> holders.put(g, m.key()));
    var left = steps(pod).stream().filter(s -> !state.done().contains(s.container())).count();
    LOG.infof("pod %s container %s: GPUs %s", m.key(), m.container(), GpuAnnotations.join(gpus.stream().sorted().toList()));
    if (left == 0) {
      assigned.add(m.uid());
      progress.remove(m.uid());
      writer.execute(() -> recorder.markAssigned(pod));
    }
  }

  /**
   * What the kubelet says each pod holds (every round): the record of handed-out GPUs becomes
   * that, and a pod it lists is admitted (no longer a candidate).
   */
  synchronized void kubeletHolds(Map<String, PodGpus> held) {
    holders.clear();
    held.values().forEach(p -> p.gpus().forEach(g -> holders.put(g, p.key())));
    var live = livePods();
    for (var pod : live.values()) {
      if (held.containsKey(pod.key())) {
        assigned.add(pod.uid());
      }
    }
    var uids = new HashSet<String>();
    live.values().forEach(p -> uids.add(p.uid()));
    assigned.retainAll(uids);
    progress.keySet().retainAll(uids);
  }

  /** A new kubelet (restarted): an answer it asked for before is no longer pending. */
  synchronized void kubeletRestarted() {
    answered = Optional.empty();
  }

  private Map<String, NodePod> livePods() {
    var out = new HashMap<String, NodePod>();
    for (var pod : pods.all()) {
      if (node.equals(pod.node()) && !pod.deleting() && !pod.finished()) {
        out.put(pod.key(), pod);
      }
    }
    return out;
  }

  private List<Candidate> candidates(Iterable<NodePod> live) {
    var out = new ArrayList<Candidate>();
    for (var pod : live) {
      var annotations = pod.annotations();
      if (!annotations.containsKey(GpuAnnotations.GPU_INDICES) || "true".equals(annotations.get(GpuAnnotations.GPU_ASSIGNED))
          || assigned.contains(pod.uid())) {
        continue;
      }
      var state = progress.getOrDefault(pod.uid(), new Progress(Set.of(), Set.of()));
      var steps = steps(pod).stream().filter(s -> !state.done().contains(s.container())).toList();
      if (steps.isEmpty()) {
        continue;
      }
      out.add(new Candidate(pod.uid(), pod.key(), pods.arrival(pod.uid()), pod.created(), steps, state.handed()));
    }
    return out;
  }

  /** The pod's containers asking this resource, in the kubelet's order, each with its part of bind's choice; none if unreadable. */
  private List<Step> steps(NodePod pod) {
    var parts = parts(pod);
    if (parts.isEmpty()) {
      return List.of();
    }
    var out = new ArrayList<Step>();
    var ordered = new ArrayList<NodePod.Container>(pod.initContainers());
    ordered.addAll(pod.containers());
    for (var container : ordered) {
      var size = container.amount(resource);
      if (size <= 0) {
        continue;
      }
      var part = parts.get().get(container.name());
      if (part == null || part.size() != size) {
        return List.of();
      }
      out.add(new Step(container.name(), size, part));
    }
    return out;
  }

  /** Bind's split (its annotation, else the same split of the pod's indices). */
  private Optional<Map<String, List<Integer>>> parts(NodePod pod) {
    var annotations = pod.annotations();
    try {
      var split = annotations.get(ContainerGpus.CONTAINER_GPUS);
      if (split != null) {
        return Optional.of(ContainerGpus.parse(split));
      }
      var gpus = GpuAnnotations.parse(annotations.get(GpuAnnotations.GPU_INDICES));
      return ContainerGpus.split(slots(pod.initContainers(), true), slots(pod.containers(), false), gpus)
          .map(ps -> {
            var out = new HashMap<String, List<Integer>>();
            ps.forEach(p -> out.put(p.container(), p.gpus()));
            return out;
          });
    } catch (IllegalArgumentException unreadable) {
      return Optional.empty();
    }
  }

  private List<ContainerGpus.Slot> slots(List<NodePod.Container> containers, boolean init) {
    return containers.stream().map(c -> new ContainerGpus.Slot(c.name(), init && c.sidecar(),
        wholeResources.stream().mapToInt(c::amount).sum())).toList();
  }

  private Set<Integer> indices(List<String> ids) {
    var out = new LinkedHashSet<Integer>();
    for (var id : ids) {
      devices.byUuid(id).ifPresent(d -> out.add(d.index()));
    }
    return out;
  }

  private List<String> uuids(List<Integer> gpus) {
    var out = new ArrayList<String>();
    for (var g : gpus) {
      devices.byIndex(g).ifPresent(d -> out.add(d.uuid()));
    }
    return out;
  }
}
