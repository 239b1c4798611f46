package io.gpuadmission.preemption;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.HeldRoom;
import io.gpuadmission.placement.Nominations;
import io.gpuadmission.placement.PodClaims;
import io.gpuadmission.policy.GpuPolicy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The {@link PodFacts} of every GPU pod, kept from the pod informer (the stream the GPU ledger
 * reads), by UID, by gang and, for pending pods, by the node they are nominated to: preemption
 * reads a victim's priority and gang here (and the GPUs it holds from the ledger), filter and bind
 * the {@link Nominations}, team quotas every bound pod's ask ({@link KnownGpuPods}). Every replica
 * keeps the same index.
 */
public final class PodFactsIndex implements Nominations, KnownGpuPods {
  private final Supplier<GpuPolicy> policies;
  private final Map<String, PodFacts> byUid = new ConcurrentHashMap<>();
  private final Map<String, Set<String>> byGang = new ConcurrentHashMap<>();
  /** Pending pods nominated to each node: filter holds their GPUs there for pods of no higher priority. */
  private final Map<String, Map<String, PodFacts>> nominated = new ConcurrentHashMap<>();
  /** Room the service freed for a pending pod ({@link #hold}, or its pod's condition): by UID. */
  private final Map<String, HeldRoom> held = new ConcurrentHashMap<>();

  private final GpuLedger ledger;
  private volatile long generation;

  /** {@code ledger}: a nominated pod that already holds GPUs there (a bind in progress, a gang plan) holds nothing more. */
  public PodFactsIndex(Supplier<GpuPolicy> policies, GpuLedger ledger) {
    this.policies = policies;
    this.ledger = ledger;
  }

  /**
   * A GPU pod as it is now; a finished one is forgotten, as the ledger frees its GPUs. A pending
   * pod whose condition holds room for it ({@link HeldRoom}, written by whichever replica led when
   * it was freed) is held for here too.
   */
  public void current(Pod pod) {
    if (pod.getMetadata() == null || pod.getMetadata().getUid() == null) {
      return;
    }
    if (PodClaims.finished(pod)) {
      gone(pod);
      return;
    }
    var facts = PodFacts.of(pod, policies.get());
    put(facts);
    var now = Instant.now();
    HeldRoom.asSeen(pod, now).filter(room -> stillHeld(facts, room, now)).ifPresent(room -> adopt(facts.uid(), room));
  }

  /** Holds {@code room}, written on the pod, unless this replica holds it longer already. */
  private synchronized void adopt(String uid, HeldRoom room) {
    var mine = held.get(uid);
    if (mine == null || mine.until().isBefore(room.until())) {
      held.put(uid, room);
      generation++;
    }
  }

  public void gone(Pod pod) {
    if (pod.getMetadata() != null && pod.getMetadata().getUid() != null) {
      remove(pod.getMetadata().getUid());
    }
  }

  /**
   * Reads every pod again from {@code pods}, the pod informer's store (the policy's job labels
   * changed, so gangs may have too). The store is read under the lock {@link #current} and {@link
   * #gone} take: the informer updates its store before it calls them, so a pod deleted or changed
   * after the read is told here after this returns, and never comes back as it was (a ghost pod).
   */
  public synchronized void replaceAll(Supplier<List<Pod>> pods) {
    byUid.clear();
    byGang.clear();
    nominated.clear();
    generation++;
    pods.get().forEach(this::current);
  }

  public synchronized void put(PodFacts facts) {
    var old = drop(facts.uid());
    byUid.put(facts.uid(), facts);
    facts.gang().ifPresent(g -> byGang.computeIfAbsent(g, k -> ConcurrentHashMap.newKeySet()).add(facts.uid()));
    if (facts.nominatedPending() && facts.ask().kind() != GpuAsk.Kind.NONE) {
      nominated.computeIfAbsent(facts.nominated(), k -> new ConcurrentHashMap<>()).put(facts.uid(), facts);
    }
    // Stored before the ledger is asked: a claim made meanwhile moves the ledger's generation instead.
    // A pod held for counts in its team's usage while it waits: any change of it may end that.
    if (!Objects.equals(QuotaView.of(old), QuotaView.of(facts)) && (readByQuota(old) || readByQuota(facts) || held.containsKey(facts.uid()))) {
      generation++;
    }
  }

  /**
   * Most important first (priority, then UID for a stable order), as kube-scheduler adds them: the
   * pods nominated to the node, and those the service holds room there for ({@link #hold}).
   */
  @Override
  public List<GpuAsk> heldOn(String node, int priority, String exceptUid) {
    var here = nominated.get(node);
    var pods = new ArrayList<PodFacts>();
    heldNow().stream().filter(h -> h.getValue().equals(node)).forEach(h -> pods.add(h.getKey()));
    if (here == null && pods.isEmpty()) {
      return List.of();
    }
    if (here != null) {
      here.values().stream().filter(f -> !held.containsKey(f.uid())).forEach(pods::add);
    }
    return pods.stream()
        .filter(f -> f.priority() >= priority && !f.uid().equals(exceptUid) && ledger.claim(f.uid()).isEmpty())
        .sorted(Comparator.comparingInt((PodFacts f) -> -f.priority()).thenComparing(PodFacts::uid))
        .map(PodFacts::ask)
        .toList();
  }

  /**
   * Holds {@code room} for a pending pod until its time is up or it is bound or gone: its GPUs on
   * the room's node ({@link #heldOn}) and its ask in its team's quota ({@link #held()}), as a
   * nomination holds them, whatever kube-scheduler then does with the pod's nomination (it clears
   * one when a retry's preemption finds no victim, while the victims reclaim chose still terminate).
   * Holding again moves the time. The other replicas hold it once the pod's condition shows it.
   */
  public synchronized void hold(String uid, HeldRoom room) {
    held.put(uid, room);
    generation++;
  }

  /** Whether the service holds room for this pending pod now ({@link #hold}). */
  public boolean holdsRoomFor(String uid) {
    var room = held.get(uid);
    if (room == null) {
      return false;
    }
    var facts = byUid.get(uid);
    return stillHeld(facts, room, Instant.now()) || recheck(uid).isPresent();
  }

  /** The pending pods the service holds room for now; those bound, gone or past their time are let go. */
  @Override
  public List<PodFacts> held() {
    return heldNow().stream().map(Map.Entry::getKey).toList();
  }

  /** Each pod held for now with the node its room is on. */
  private List<Map.Entry<PodFacts, String>> heldNow() {
    if (held.isEmpty()) {
      return List.of();
    }
    var now = Instant.now();
    var out = new ArrayList<Map.Entry<PodFacts, String>>();
    held.forEach((uid, room) -> {
      var facts = byUid.get(uid);
      if (stillHeld(facts, room, now)) {
        out.add(Map.entry(facts, room.node()));
      } else {
        recheck(uid).ifPresent(out::add);
      }
    });
    return out;
  }

  /** A room is held until its pod is bound, gone or being deleted, or its time is up. */
  private static boolean stillHeld(PodFacts facts, HeldRoom room, Instant now) {
    return facts != null && facts.node().isEmpty() && !facts.terminating() && room.heldAt(now);
  }

  /**
   * A room seen lapsed without the lock, looked at again under it: still held (seen between
   * {@link #put}'s drop and store, or held again meanwhile), its pod and node; else let go.
   */
  private synchronized Optional<Map.Entry<PodFacts, String>> recheck(String uid) {
    var room = held.get(uid);
    var facts = byUid.get(uid);
    if (room != null && stillHeld(facts, room, Instant.now())) {
      return Optional.of(Map.entry(facts, room.node()));
    }
    if (held.remove(uid) != null) {
      generation++;
    }
    return Optional.empty();
  }

  /**
   * Pending pods nominated to {@code node} with a priority below {@code priority}: a preemption for
   * a pod of that priority takes their place there, so their nominations are cleared
   * (kube-scheduler's {@code getLowerPriorityNominatedPods}).
   */
  public List<PodFacts> nominatedBelow(String node, int priority) {
    var here = nominated.get(node);
    if (here == null) {
      return List.of();
    }
    return here.values().stream().filter(f -> f.priority() < priority).sorted(Comparator.comparing(PodFacts::uid)).toList();
  }

  /**
   * Pending pods that may preempt: not bound, not being deleted, not nominated (a preemption for
   * them is made), asking GPUs, not a gang member (the gang coordinator preempts for gangs), and of higher priority
   * than some pod holding GPUs (else no victim can exist).
   */
  public List<PodFacts> mayPreempt() {
    var lowest = ledger.claims().keySet().stream().map(byUid::get).filter(f -> f != null && !f.terminating())
        .mapToInt(PodFacts::priority).min();
    if (lowest.isEmpty()) {
      return List.of();
    }
    return byUid.values().stream()
        .filter(f -> f.node().isEmpty() && !f.terminating() && f.nominated().isEmpty() && f.gang().isEmpty()
            && f.ask().kind() != GpuAsk.Kind.NONE && f.priority() > lowest.getAsInt())
        .sorted(Comparator.comparing(PodFacts::uid))
        .toList();
  }

  @Override
  public Optional<PodFacts> facts(String uid) {
    return Optional.ofNullable(byUid.get(uid));
  }

  /** Every pod of a gang the index knows, bound or not. */
  public List<PodFacts> gang(String gang) {
    return byGang.getOrDefault(gang, Set.of()).stream().map(byUid::get).filter(f -> f != null).toList();
  }

  @Override
  public List<PodFacts> bound() {
    return byUid.values().stream().filter(f -> !f.node().isEmpty() && f.ask().kind() != GpuAsk.Kind.NONE).toList();
  }

  /** Moves when what team quotas read changes, a held room's time running out included. */
  @Override
  public long generation() {
    if (!held.isEmpty()) {
      heldNow();
    }
    return generation;
  }

  private synchronized void remove(String uid) {
    var counted = readByQuota(drop(uid));
    var wasHeld = held.remove(uid) != null;
    if (counted || wasHeld) {
      generation++;
    }
  }

  /** Team quotas count it: it asks GPUs, and is bound or holds the ledger's GPUs (a gang's plan, a bind). */
  private boolean readByQuota(PodFacts facts) {
    return facts != null && facts.ask().kind() != GpuAsk.Kind.NONE && (!facts.node().isEmpty() || ledger.claim(facts.uid()).isPresent());
  }

  /** What team quotas read of a pod; null for none. A pod being deleted leaves its team's usage. */
  private record QuotaView(String namespace, String node, GpuAsk ask, int priority, Instant started, Optional<String> gang, boolean terminating) {
    static QuotaView of(PodFacts facts) {
      return facts == null ? null
          : new QuotaView(facts.namespace(), facts.node(), facts.ask(), facts.priority(), facts.started(), facts.gang(), facts.terminating());
    }
  }

  private synchronized PodFacts drop(String uid) {
    var old = byUid.remove(uid);
    if (old != null && old.nominatedPending()) {
      nominated.computeIfPresent(old.nominated(), (node, pods) -> {
        pods.remove(uid);
        return pods.isEmpty() ? null : pods;
      });
    }
    if (old != null && old.gang().isPresent()) {
      var members = byGang.get(old.gang().get());
      if (members != null) {
        members.remove(uid);
        if (members.isEmpty()) {
          byGang.remove(old.gang().get());
        }
      }
    }
    return old;
  }
}
