package io.gpuadmission.teamquota;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * When the sweep may requeue one pending pod that the extender would place now and that
 * kube-scheduler still holds as unschedulable: once it has fitted for {@code first}
 * (kube-scheduler tries a pod again by itself on most changes that make room, a victim's deletion
 * among them, and a requeue written while it binds the pod makes the bind's patch meet a newer
 * pod), then after twice that, and so on up to {@code last}. A requeue that does not place the pod
 * means kube-scheduler refuses it for a reason of its own (CPU, a port, its own count of GPUs while
 * a victim still terminates), so asking again at a fixed rate would only spend scheduling cycles.
 */
final class RequeueBackoff {
  private final Duration first;
  private final Duration last;
  private final Map<String, Due> due = new ConcurrentHashMap<>();

  private record Due(Instant at, Duration pause) {}

  RequeueBackoff(Duration first, Duration last) {
    this.first = first;
    this.last = last;
  }

  /**
   * The pod fits at {@code now}: whether it may be requeued (not the first time it is seen fitting);
   * when it may, the next requeue waits longer.
   */
  boolean take(String uid, Instant now) {
    var next = due.get(uid);
    if (next == null) {
      due.put(uid, new Due(now.plus(first), first));
      return false;
    }
    if (now.isBefore(next.at())) {
      return false;
    }
    var pause = min(next.pause().multipliedBy(2), last);
    due.put(uid, new Due(now.plus(pause), pause));
    return true;
  }

  /** Forgets every pod but {@code fitting}: one bound, gone or that no longer fits starts afresh. */
  void retain(Collection<String> fitting) {
    due.keySet().retainAll(fitting);
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
