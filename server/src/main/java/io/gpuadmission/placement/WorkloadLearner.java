package io.gpuadmission.placement;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.allocator.Task;
import io.gpuadmission.policy.GpuPolicy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * FGD's target workload learned from the GPU pods the cluster asks for: one count per pod, by its
 * ask (a share of so many GiB of one GPU, or so many whole GPUs, and its CPU), for every pending
 * and running GPU pod and for those that finished or were deleted within the window. Pods are told
 * by UID, so seeing one again (an update, a second filter call) changes nothing.
 *
 * <p>Why finished pods count for a while: running pods weigh each kind of ask by how long it runs,
 * while fragmentation is about the asks that will arrive. Short jobs that come and go all day
 * would hardly show among the running pods; counting those finished within the window brings their
 * arrivals back.
 *
 * <p>A pod kube-scheduler asks about counts at once, before the informer shows it (a burst of new
 * pods weighs in from the first decision), but only for {@link #UNCONFIRMED} unless the informer
 * then shows it: a pod deleted before the informer saw it, or a request for no real pod (the
 * extender does not authenticate its caller), leaves no trace, and at most {@link
 * #MAX_UNCONFIRMED} such pods count at once. Thread-safe; {@link #get} is cheap while nothing
 * changed.
 */
public final class WorkloadLearner implements Supplier<TargetWorkload> {
  /** How long a pod kube-scheduler asked about counts without the informer showing it. */
  public static final Duration UNCONFIRMED = Duration.ofMinutes(1);

  /** The most pods that count on kube-scheduler's word alone. */
  public static final int MAX_UNCONFIRMED = 10_000;

  private final Clock clock;
  private final Supplier<Duration> window;
  private final Map<String, Entry> pods = new HashMap<>();
  /** Pods by ask; insertion order, so that the same events give the same distribution. */
  private final Map<Task, Integer> counts = new LinkedHashMap<>();
  /** Finished pods in the order they finished, for expiry. */
  private final ArrayDeque<Timed> finished = new ArrayDeque<>();
  /** Pods only kube-scheduler has shown, in the order their time runs out. */
  private final ArrayDeque<Timed> unconfirmed = new ArrayDeque<>();
  private int unconfirmedCount;
  private long version;
  private volatile TargetWorkload snapshot = TargetWorkload.NONE;
  private volatile boolean dirty;
  /** The earliest instant a pod may leave the workload; {@link Instant#MAX} while none will. */
  private volatile Instant nextExpiry = Instant.MAX;

  /** A counted pod: its ask; when it ended (null while it lives); until when it counts unconfirmed (null once the informer showed it). */
  private record Entry(Task task, Instant finishedAt, Instant unconfirmedUntil) {}

  private record Timed(String uid, Instant at) {}

  /** {@code window}: how long a finished pod still counts (read on each change, so a policy reload applies). */
  public WorkloadLearner(Clock clock, Supplier<Duration> window) {
    this.clock = clock;
    this.window = window;
  }

  /** A pod as the informer shows it: pending or running, or finished now. */
  public void observe(Pod pod, GpuPolicy policy) {
    var ask = GpuAsk.of(pod, policy);
    if (PodClaims.finished(pod)) {
      finished(pod.getMetadata().getUid(), ask, clock.instant());
    } else {
      seen(pod.getMetadata().getUid(), ask);
    }
  }

  /** The informer shows the pod deleted now. */
  public void gone(Pod pod, GpuPolicy policy) {
    finished(pod.getMetadata().getUid(), GpuAsk.of(pod, policy), clock.instant());
  }

  /** The informer shows a pending or running pod with {@code ask}; a pod without GPUs is ignored. */
  public synchronized void seen(String uid, GpuAsk ask) {
    if (uid == null || ask.kind() == GpuAsk.Kind.NONE) {
      return;
    }
    var task = key(ask);
    var known = pods.get(uid);
    if (known != null && known.finishedAt() != null) {
      return; // a finished pod does not come back (a late update of a deleted pod)
    }
    if (known != null && known.unconfirmedUntil() != null) {
      unconfirmedCount--;
    }
    if (known != null && known.task().equals(task)) {
      pods.put(uid, new Entry(task, null, null));
      return;
    }
    if (known != null) {
      count(known.task(), -1);
    }
    pods.put(uid, new Entry(task, null, null));
    count(task, 1);
  }

  /**
   * kube-scheduler asks about a pod (filter, prioritize): it counts now, for {@link #UNCONFIRMED}
   * unless the informer shows it meanwhile; a pod already counted is left as it is.
   */
  public synchronized void asked(String uid, GpuAsk ask) {
    if (uid == null || ask.kind() == GpuAsk.Kind.NONE || unconfirmedCount >= MAX_UNCONFIRMED) {
      return;
    }
    var known = pods.get(uid);
    if (known != null) {
      return;
    }
    var until = clock.instant().plus(UNCONFIRMED);
    var task = key(ask);
    pods.put(uid, new Entry(task, null, until));
    unconfirmed.addLast(new Timed(uid, until));
    unconfirmedCount++;
    count(task, 1);
    nextExpiry = nextExpiry.isBefore(until) ? nextExpiry : until;
  }

  /** The pod finished or was deleted at {@code at}: it counts until {@code at} plus the window. */
  public synchronized void finished(String uid, GpuAsk ask, Instant at) {
    if (uid == null || ask.kind() == GpuAsk.Kind.NONE) {
      return;
    }
    var known = pods.get(uid);
    if (known != null && known.finishedAt() != null) {
      return;
    }
    if (known != null && known.unconfirmedUntil() != null) {
      unconfirmedCount--;
    }
    if (known == null) {
      count(key(ask), 1);
    }
    var task = known == null ? key(ask) : known.task();
    pods.put(uid, new Entry(task, at, null));
    finished.addLast(new Timed(uid, at));
    expire(clock.instant());
  }

  /** The workload now: drops finished pods older than the window and unconfirmed ones first. */
  @Override
  public TargetWorkload get() {
    if (!dirty && clock.instant().isBefore(nextExpiry)) {
      return snapshot;
    }
    synchronized (this) {
      expire(clock.instant());
      if (dirty) {
        var weights = new LinkedHashMap<Task, Double>();
        counts.forEach((task, n) -> weights.put(task, n.doubleValue()));
        snapshot = new TargetWorkload(TargetWorkload.Source.LEARNED, weights, pods.size(), ++version);
        dirty = false;
      }
      return snapshot;
    }
  }

  private void expire(Instant now) {
    var keep = window.get();
    while (!finished.isEmpty() && !finished.peekFirst().at().plus(keep).isAfter(now)) {
      var done = finished.removeFirst();
      var entry = pods.get(done.uid());
      if (entry != null && done.at().equals(entry.finishedAt())) {
        pods.remove(done.uid());
        count(entry.task(), -1);
      }
    }
    while (!unconfirmed.isEmpty() && !unconfirmed.peekFirst().at().isAfter(now)) {
      var done = unconfirmed.removeFirst();
      var entry = pods.get(done.uid());
      if (entry != null && done.at().equals(entry.unconfirmedUntil())) {
        pods.remove(done.uid());
        unconfirmedCount--;
        count(entry.task(), -1);
      }
    }
    var next = finished.isEmpty() ? Instant.MAX : finished.peekFirst().at().plus(keep);
    if (!unconfirmed.isEmpty() && unconfirmed.peekFirst().at().isBefore(next)) {
      next = unconfirmed.peekFirst().at();
    }
    nextExpiry = next;
  }

  private void count(Task task, int delta) {
    var now = counts.getOrDefault(task, 0) + delta;
    if (now <= 0) {
      counts.remove(task);
    } else {
      counts.put(task, now);
    }
    dirty = true;
  }

  /** The ask as a task of any model: what the extender knows of every pod (GPUs and CPU). */
  private static Task key(GpuAsk ask) {
    return ask.kind() == GpuAsk.Kind.SHARE ? Task.share(ask.cpuMilli(), ask.memory()) : Task.whole(ask.cpuMilli(), ask.count());
  }
}
