package io.gpuadmission.placement;

import io.gpuadmission.allocator.GpuDevice;
import io.gpuadmission.allocator.NodeGpus;
import io.gpuadmission.placement.GpuClaim.Phase;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which GPU of which node each pod holds, read the way kube-scheduler's cache reads pods: node
 * capacity and health from informers; claims that are {@link Phase#BOUND} (a bound pod's
 * annotations, the truth), {@link Phase#RESERVED} by this replica's bind and {@link Phase#ASSUMED}
 * once the Binding exists, until the informer confirms them or they expire; {@link Phase#PLANNED}
 * for members of a planned gang, until they bind or the plan is released; {@link Phase#CHOSEN} for
 * pods kube-scheduler has picked a node for and not bound yet, until their bind or a short bound. Derived state only:
 * {@link #rebuild} from a fresh pod list gives the same ledger on any replica.
 *
 * <p>Writes are serialised; reads of a node's GPUs ({@link #view}) are lock-free snapshots, so
 * filter and prioritize over thousands of nodes never wait for a bind.
 */
public final class GpuLedger {
  private final Map<String, GpuNodeCapacity> capacity = new ConcurrentHashMap<>();
  private final Map<String, Set<Integer>> unhealthy = new HashMap<>();
  private final Map<String, GpuClaim> claims = new HashMap<>();
  private final Map<String, Map<String, GpuClaim>> claimsByNode = new HashMap<>();
  private final Map<String, NodeGpus> views = new ConcurrentHashMap<>();
  /** Nodes seen without GPUs, and nodes deleted: told apart from nodes not seen yet. */
  private final Set<String> withoutGpus = ConcurrentHashMap.newKeySet();
  private final Set<String> deleted = ConcurrentHashMap.newKeySet();
  private volatile long generation;
  /** Claims in {@link Phase#CHOSEN}: kept as claims come and go, for a gauge read on every scrape. */
  private volatile int chosen;
  /** Rebuilds whose pod list is being read. */
  private final List<Rebuild> rebuilds = new ArrayList<>();

  public synchronized void putNode(GpuNodeCapacity node) {
    withoutGpus.remove(node.name());
    deleted.remove(node.name());
    if (node.equals(capacity.get(node.name()))) {
      return; // a node update (status, heartbeat) that left its GPUs as they were
    }
    capacity.put(node.name(), node);
    refresh(node.name());
  }

  /**
   * A node the informer has not shown yet, as kube-scheduler sent it ({@code nodeCacheCapable:
   * false}): its GPUs, or none (empty). Taken only when this ledger knows nothing of the node, so
   * the informer's own view, whenever it comes, always wins.
   */
  public synchronized void learnNode(String node, Optional<GpuNodeCapacity> gpus) {
    if (capacity.containsKey(node) || withoutGpus.contains(node) || deleted.contains(node)) {
      return;
    }
    if (gpus.isPresent()) {
      putNode(gpus.get());
    } else {
      putNodeWithoutGpus(node);
    }
  }

  /** Forgets a node's GPUs; claims on it stay until their pods go, as the pods still exist. */
  public synchronized void removeNode(String node) {
    withoutGpus.remove(node);
    deleted.add(node);
    capacity.remove(node);
    refresh(node);
  }

  /** The node exists and has no GPUs (no GPU labels or allocatable GPU resources). */
  public synchronized void putNodeWithoutGpus(String node) {
    capacity.remove(node);
    refresh(node);
    deleted.remove(node);
    withoutGpus.add(node);
  }

  /** True for a node this ledger saw deleted (and not added again). */
  public boolean knownDeleted(String node) {
    return deleted.contains(node);
  }

  /** True for a node seen without GPUs; false for one with GPUs or not seen at all. */
  public boolean knownWithoutGpus(String node) {
    return withoutGpus.contains(node);
  }

  /** The GPUs an {@code unhealthy-gpu-<node>} ConfigMap lists; an empty set clears them. */
  public synchronized void setUnhealthy(String node, Set<Integer> gpus) {
    if (gpus.isEmpty()) {
      unhealthy.remove(node);
    } else {
      unhealthy.put(node, Set.copyOf(gpus));
    }
    refresh(node);
  }

  /** A bound pod's annotations, seen by the informer or a list: replaces any claim of that pod. */
  public synchronized void confirm(GpuClaim bound) {
    told(bound.podUid());
    put(bound.in(Phase.BOUND, Instant.MAX));
  }

  /** The pod is gone or finished: its GPUs are free. */
  public synchronized void forget(String podUid) {
    told(podUid);
    remove(podUid);
  }

  /**
   * Claims GPUs for a pod being bound, if they are still free; false when another claim took them
   * first (the caller reports the conflict; nothing changes).
   */
  public synchronized boolean reserve(GpuClaim claim) {
    var existing = claims.get(claim.podUid());
    if (existing != null && existing.phase() == Phase.BOUND) {
      return false;
    }
    if (existing != null) {
      remove(claim.podUid());
    }
    var node = views.get(claim.node());
    if (node == null || !fits(node, claim)) {
      if (existing != null) {
        put(existing);
      }
      return false;
    }
    put(claim.in(Phase.RESERVED, Instant.MAX));
    return true;
  }

  /**
   * Holds GPUs for a gang member the leader has just planned, until {@code until} unless the
   * informer shows the plan on the pod first ({@link #planSeen}); false when they are no longer
   * free or the pod already holds GPUs of its own.
   */
  public synchronized boolean plan(GpuClaim planned, Instant until) {
    return putPlanned(planned.in(Phase.PLANNED, until), false);
  }

  /**
   * A pending pod shows a plan on its annotations: it holds those GPUs until the plan is removed
   * or the pod binds. False when they are taken (the plan is stale; the leader remakes it). On a
   * node not seen yet (after a restart the pods may come before the nodes) the claim is kept, as a
   * bound pod's is, and counts once the node arrives.
   */
  public synchronized boolean planSeen(GpuClaim planned) {
    return putPlanned(planned.in(Phase.PLANNED, Instant.MAX), true);
  }

  /** The plan was released by this replica: the member's planned GPUs are free. */
  public synchronized void unplan(String podUid) {
    var claim = claims.get(podUid);
    if (claim != null && claim.phase() == Phase.PLANNED) {
      remove(podUid);
    }
  }

  /**
   * A pending pod shows no plan: a plan seen on it before was released. A plan this replica has
   * just made and not seen yet stays (the informer may still show the pod as it was before).
   */
  public synchronized void unplanSeen(String podUid) {
    var claim = claims.get(podUid);
    if (claim != null && claim.phase() == Phase.PLANNED && claim.expires().equals(Instant.MAX)) {
      remove(podUid);
    }
  }

  private boolean putPlanned(GpuClaim planned, boolean seen) {
    var existing = claims.get(planned.podUid());
    if (existing != null && existing.phase() != Phase.PLANNED) {
      return false;
    }
    if (existing != null) {
      remove(planned.podUid());
    }
    var node = views.get(planned.node());
    if (node == null && seen && !capacity.containsKey(planned.node())) {
      put(planned);
      return true;
    }
    if (node == null || !fits(node, planned)) {
      if (existing != null) {
        put(existing);
      }
      return false;
    }
    put(planned);
    return true;
  }

  /**
   * Holds the GPUs kube-scheduler is about to bind a pod to ({@link Phase#CHOSEN}) until {@code
   * until}, replacing the pod's earlier choice; false when they are not free, or when the pod holds
   * GPUs otherwise (bound, being bound, planned), which then stay as they are.
   */
  public synchronized boolean hold(GpuClaim choice, Instant until) {
    var existing = claims.get(choice.podUid());
    if (existing != null && existing.phase() != Phase.CHOSEN) {
      return false;
    }
    if (existing != null) {
      remove(choice.podUid());
    }
    var node = views.get(choice.node());
    if (node == null || !fits(node, choice)) {
      return false;
    }
    put(choice.in(Phase.CHOSEN, until));
    return true;
  }

  /** Drops the pod's choice in flight, if it holds one (its bind came, it is scheduled again, it went elsewhere). */
  public synchronized void release(String podUid) {
    var claim = claims.get(podUid);
    if (claim != null && claim.phase() == Phase.CHOSEN) {
      remove(podUid);
    }
  }

  /** Drops every choice in flight (this replica no longer leads: the next leader's binds will not expect them). */
  public synchronized void releaseChoices() {
    for (var claim : List.copyOf(claims.values())) {
      if (claim.phase() == Phase.CHOSEN) {
        remove(claim.podUid());
      }
    }
  }

  /** How many choices in flight the ledger holds. */
  public int choicesHeld() {
    return chosen;
  }

  /** Undoes a reservation or assumption whose Binding failed; a confirmed claim stays. */
  public synchronized void unreserve(String podUid) {
    var claim = claims.get(podUid);
    if (claim != null && claim.phase() != Phase.BOUND) {
      remove(podUid);
    }
  }

  /** The Binding exists: the claim holds until the informer confirms it, or until {@code expires}. */
  public synchronized void assume(String podUid, Instant expires) {
    var claim = claims.get(podUid);
    if (claim != null && claim.phase() == Phase.RESERVED) {
      put(claim.in(Phase.ASSUMED, expires));
    }
  }

  /**
   * Drops assumptions and fresh plans the informer never confirmed by {@code now}, and choices in
   * flight whose bind never came; returns them.
   */
  public synchronized List<GpuClaim> expire(Instant now) {
    var expired = new ArrayList<GpuClaim>();
    for (var claim : List.copyOf(claims.values())) {
      if ((claim.phase() == Phase.ASSUMED || claim.phase() == Phase.PLANNED || claim.phase() == Phase.CHOSEN) && !claim.expires().isAfter(now)) {
        remove(claim.podUid());
        expired.add(claim);
      }
    }
    return expired;
  }

  /**
   * Replaces every confirmed claim with {@code bound}, a list of the pods already read (a new
   * leader, a restart). Reservations and assumptions of this replica stay unless listed.
   */
  public void rebuild(Collection<GpuClaim> bound) {
    try (var rebuild = beginRebuild()) {
      rebuild.apply(bound);
    }
  }

  /**
   * Call before listing the pods for a rebuild, and {@link Rebuild#apply} the list when it is in.
   * The informer goes on confirming and forgetting pods while the list is read, and what it says
   * of a pod in that time is at least as new as the list: a pod bound, finished or deleted after
   * the list was read is known to the informer only, which never tells it again. So the rebuild
   * leaves the pods told of meanwhile as the informer left them, and replaces the others.
   */
  public synchronized Rebuild beginRebuild() {
    var rebuild = new Rebuild();
    rebuilds.add(rebuild);
    return rebuild;
  }

  /** A rebuild under way: the pods confirmed or forgotten since it began. Close it if the list fails. */
  public final class Rebuild implements AutoCloseable {
    private final Set<String> toldSince = new HashSet<>();

    private Rebuild() {}

    /**
     * Replaces the confirmed claims not told of since {@link #beginRebuild} with those of {@code
     * bound}. A rebuild begun earlier and applied later changes nothing: its list is older.
     */
    public void apply(Collection<GpuClaim> bound) {
      synchronized (GpuLedger.this) {
        var index = rebuilds.indexOf(this);
        if (index < 0) {
          return;
        }
        rebuilds.subList(0, index + 1).clear();
        for (var claim : List.copyOf(claims.values())) {
          if (claim.phase() == Phase.BOUND && !toldSince.contains(claim.podUid())) {
            remove(claim.podUid());
          }
        }
        for (var claim : bound) {
          if (!toldSince.contains(claim.podUid())) {
            put(claim.in(Phase.BOUND, Instant.MAX));
          }
        }
      }
    }

    @Override
    public void close() {
      synchronized (GpuLedger.this) {
        rebuilds.remove(this);
      }
    }
  }

  private void told(String podUid) {
    for (var rebuild : rebuilds) {
      rebuild.toldSince.add(podUid);
    }
  }

  /** A node's GPUs with what is claimed on them; empty for a node without known GPUs. */
  public Optional<NodeGpus> view(String node) {
    return Optional.ofNullable(views.get(node));
  }

  /** Lock-free, like {@link #view}: filter and prioritize read it for every node. */
  public Optional<GpuNodeCapacity> capacity(String node) {
    return Optional.ofNullable(capacity.get(node));
  }

  public synchronized Set<Integer> unhealthy(String node) {
    return unhealthy.getOrDefault(node, Set.of());
  }

  /** The claim a pod holds, if any. */
  public synchronized Optional<GpuClaim> claim(String podUid) {
    return Optional.ofNullable(claims.get(podUid));
  }

  /** Every claim, by pod UID. */
  public synchronized Map<String, GpuClaim> claims() {
    return Map.copyOf(claims);
  }

  public synchronized List<GpuClaim> claimsOn(String node) {
    return List.copyOf(claimsByNode.getOrDefault(node, Map.of()).values());
  }

  public synchronized Set<String> nodes() {
    return new TreeSet<>(capacity.keySet());
  }

  /** Changes on every write: lets callers cache what they derive from the claims. */
  public long generation() {
    return generation;
  }

  private void put(GpuClaim claim) {
    remove(claim.podUid());
    claims.put(claim.podUid(), claim);
    if (claim.phase() == Phase.CHOSEN) {
      chosen++;
    }
    claimsByNode.computeIfAbsent(claim.node(), n -> new LinkedHashMap<>()).put(claim.podUid(), claim);
    refresh(claim.node());
  }

  private void remove(String podUid) {
    var old = claims.remove(podUid);
    if (old != null) {
      if (old.phase() == Phase.CHOSEN) {
        chosen--;
      }
      var onNode = claimsByNode.get(old.node());
      onNode.remove(podUid);
      if (onNode.isEmpty()) {
        claimsByNode.remove(old.node());
      }
      refresh(old.node());
    }
  }

  /**
   * Whether the claim's GPUs are still free. Not its CPU: kube-scheduler counts every pod's CPU
   * and has found room before bind, where the ledger knows only the GPU pods'.
   */
  private static boolean fits(NodeGpus node, GpuClaim claim) {
    for (var g : claim.gpus()) {
      if (g < 0 || g >= node.gpus().size()) {
        return false;
      }
      var gpu = node.gpus().get(g);
      if (claim.whole() ? !gpu.wholeFree() : gpu.free() < claim.memory()) {
        return false;
      }
    }
    return !claim.gpus().isEmpty() || claim.cpuMilli() > 0;
  }

  /** Recomputes one node's view after a change; used memory is capped at capacity for the allocator. */
  private void refresh(String node) {
    generation++;
    var gpus = capacity.get(node);
    if (gpus == null) {
      views.remove(node);
      return;
    }
    var used = usedMemory(node, gpus);
    var sick = unhealthy.getOrDefault(node, Set.of());
    var devices = new ArrayList<GpuDevice>(gpus.count());
    for (int g = 0; g < gpus.count(); g++) {
      var size = size(gpus, g);
      devices.add(new GpuDevice(g, gpus.model(), size, Math.min(size, used[g]), !sick.contains(g)));
    }
    var cpu = gpus.cpuMilli();
    views.put(node, new NodeGpus(node, devices, Optional.empty(), cpu, cpu == Long.MAX_VALUE ? cpu : cpu - usedCpu(node)));
  }

  private long usedCpu(String node) {
    long used = 0;
    for (var claim : claimsByNode.getOrDefault(node, Map.of()).values()) {
      used += claim.cpuMilli();
    }
    return used;
  }

  /**
   * A GPU's size in the view: its memory in GiB, or one unit when no label or resource tells its
   * memory (a plain nvidia.com/gpu node). A whole-GPU claim fills the GPU by taking all of it, so a
   * size of 0 would leave the GPU free for every later claim; no share fits one unit's worth.
   */
  private static long size(GpuNodeCapacity gpus, int g) {
    return Math.max(gpus.memory().get(g), 1);
  }

  /** Memory claimed on each GPU of a node (GiB): a whole-GPU claim takes all of it. */
  long[] usedMemory(String node, GpuNodeCapacity gpus) {
    var used = new long[gpus.count()];
    for (var claim : claimsByNode.getOrDefault(node, Map.of()).values()) {
      for (var g : claim.gpus()) {
        if (g >= 0 && g < used.length) {
          used[g] += claim.whole() ? size(gpus, g) : claim.memory();
        }
      }
    }
    return used;
  }
}
