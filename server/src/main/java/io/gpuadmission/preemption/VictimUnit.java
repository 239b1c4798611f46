package io.gpuadmission.preemption;

import java.time.Instant;
import java.util.List;

/**
 * What is evicted together: one pod, or every placed member of a gang (evicting one member breaks
 * the whole gang, so either all of them go or none). Ordered as kube-scheduler's {@code
 * MoreImportantPod} orders pods: by its highest priority, then by its earliest start.
 */
record VictimUnit(List<Victim> pods) {
  VictimUnit {
    pods = List.copyOf(pods);
  }

  int priority() {
    var highest = Integer.MIN_VALUE;
    for (var pod : pods) {
      highest = Math.max(highest, pod.facts().priority());
    }
    return highest;
  }

  Instant started() {
    var earliest = Instant.MAX;
    for (var pod : pods) {
      earliest = pod.facts().started().isBefore(earliest) ? pod.facts().started() : earliest;
    }
    return earliest;
  }

  /** Every pod of it is being deleted already: evicting it costs nothing more. */
  boolean terminating() {
    for (var pod : pods) {
      if (!pod.facts().terminating()) {
        return false;
      }
    }
    return true;
  }

  boolean touches(int gpu) {
    for (var pod : pods) {
      if (pod.claim().gpus().contains(gpu)) {
        return true;
      }
    }
    return false;
  }

  /** More important first: higher priority, then the earlier start (kube-scheduler reprieves those first). */
  static int moreImportantFirst(VictimUnit a, VictimUnit b) {
    if (a.priority() != b.priority()) {
      return Integer.compare(b.priority(), a.priority());
    }
    return a.started().compareTo(b.started());
  }
}
