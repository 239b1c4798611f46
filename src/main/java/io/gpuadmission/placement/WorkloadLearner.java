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
 * ask (a share of so many GiB of one GPU, or so many whole GPUs, and its CPU), for every pending and running
 * GPU pod and for those that finished or were deleted within the window. Pods are told by UID, so
 * seeing one again (an update, a second filter call) changes nothing.
 *
 * <p>Why finished pods count for a while: running pods weigh each kind of ask by how long it runs,
 * while fragmentation is about the asks that will arrive. Short jobs that come and go all day
 * would hardly show among the running pods; counting those finished within the window brings their
 * arrivals back. Thread-safe; {@link #get} is cheap while nothing changed.
 */
public final class WorkloadLearner implements Supplier<TargetWorkload> {
  private final Clock clock;
  private final Supplier<Duration> window;
  private final Map<String, Entry> pods = new HashMap<>();
  /** Pods by ask; insertion order, so that the same events give the same distribution. */
  private final Map<Task, Integer> counts = new LinkedHashMap<>();
  /** Finished pods in the order they finished, for expiry. */
  private final ArrayDeque<Finished> finished = new ArrayDeque<>();
  private long version;
  private volatile TargetWorkload snapshot = TargetWorkload.NONE;
  private volatile boolean dirty;
  /** The earliest instant a finished pod leaves the workload; {@link Instant#MAX} while none. */
  private volatile Instant nextExpiry = Instant.MAX;

  private record Entry(Task task, Instant finishedAt) {}

  private record Finished(String uid, Instant at) {}

  /** {@code window}: how long a finished pod still counts (read on each change, so a policy reload applies). */
  public WorkloadLearner(Clock clock, Supplier<Duration> window) {
    this.clock = clock;
    this.window = window;
  }

  /** A pod as the informer or kube-scheduler shows it: pending or running, or finished now. */
  public void observe(Pod pod, GpuPolicy policy) {
    var ask = GpuAsk.of(pod, policy);
    if (GpuAnnotations.finished(pod)) {
      finished(pod.getMetadata().getUid(), ask, clock.instant());
    } else {
      seen(pod.getMetadata().getUid(), ask);
    }
  }

  /** The pod was deleted now. */
  public void gone(Pod pod, GpuPolicy policy) {
    finished(pod.getMetadata().getUid(), GpuAsk.of(pod, policy), clock.instant());
  }

  /** A pending or running pod with {@code ask}; a pod without GPUs is ignored. */
  public synchronized void seen(String uid, GpuAsk ask) {
    if (uid == null || ask.kind() == GpuAsk.Kind.NONE) {
      return;
    }
    var task = key(ask);
    var known = pods.get(uid);
    if (known != null && known.finishedAt() != null) {
      return; // a finished pod does not come back (a late update of a deleted pod)
    }
    if (known != null && known.task().equals(task)) {
      return;
    }
    if (known != null) {
      count(known.task(), -1);
    }
    pods.put(uid, new Entry(task, null));
    count(task, 1);
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
    if (known == null) {
      count(key(ask), 1);
    }
    var task = known == null ? key(ask) : known.task();
    pods.put(uid, new Entry(task, at));
    finished.addLast(new Finished(uid, at));
    expire(clock.instant());
  }

  /** The workload now: drops finished pods older than the window first. */
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
    nextExpiry = finished.isEmpty() ? Instant.MAX : finished.peekFirst().at().plus(keep);
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
