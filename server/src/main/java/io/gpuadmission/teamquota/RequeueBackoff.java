package io.gpuadmission.teamquota;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How often the sweep may requeue one pending pod that the extender would place now and that
 * kube-scheduler still holds as unschedulable: at once the first time, then after {@code first},
 * twice that, and so on up to {@code last}. A requeue that does not place the pod means
 * kube-scheduler refuses it for a reason of its own (CPU, a port, its own count of GPUs while a
 * victim still terminates), so asking again at a fixed rate would only spend scheduling cycles.
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

  /** Whether the pod may be requeued at {@code now}; when it may, the next requeue waits longer. */
  boolean take(String uid, Instant now) {
    var next = due.get(uid);
    if (next != null && now.isBefore(next.at())) {
      return false;
    }
    var pause = next == null ? first : min(next.pause().multipliedBy(2), last);
    due.put(uid, new Due(now.plus(pause), pause));
    return true;
  }

  /** Forgets every pod but {@code waiting} (those bound, gone, or placeable no longer start afresh). */
  void retain(Collection<String> waiting) {
    due.keySet().retainAll(waiting);
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
