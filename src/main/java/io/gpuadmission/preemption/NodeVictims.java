package io.gpuadmission.preemption;

import java.time.Instant;
import java.util.Comparator;
import java.util.List;

/**
 * The pods to evict on one node so that a pod fits there, and how many PodDisruptionBudgets that
 * violates (kube-scheduler's {@code extenderv1.Victims}). {@code gpus} names the GPUs freed, for
 * the messages.
 */
public record NodeVictims(String node, List<Victim> victims, int pdbViolations, List<Integer> gpus) {
  public NodeVictims {
    victims = List.copyOf(victims);
    gpus = List.copyOf(gpus);
  }

  /**
   * Better first, as kube-scheduler's {@code pickOneNodeForPreemption} ranks candidates: fewest
   * PodDisruptionBudget violations, then the lowest highest-priority victim, then the smallest sum
   * of priorities (each shifted by 2^31 so that more victims of a negative priority never win),
   * then the fewest victims, then the latest start among the highest-priority victims. Ties keep
   * the order they came in.
   */
  public static final Comparator<NodeVictims> BETTER_FIRST =
      Comparator.comparingInt(NodeVictims::pdbViolations)
          .thenComparingLong(NodeVictims::highestPriority)
          .thenComparingLong(NodeVictims::prioritySum)
          .thenComparingInt(v -> v.victims().size())
          .thenComparing(NodeVictims::earliestStartOfHighest, Comparator.reverseOrder());

  long highestPriority() {
    var highest = Long.MIN_VALUE;
    for (var victim : victims) {
      highest = Math.max(highest, victim.facts().priority());
    }
    return highest;
  }

  long prioritySum() {
    long sum = 0;
    for (var victim : victims) {
      sum += victim.facts().priority() + (1L << 31);
    }
    return sum;
  }

  /** kube-scheduler's {@code GetEarliestPodStartTime}: the earliest start among the highest-priority victims. */
  Instant earliestStartOfHighest() {
    var highest = highestPriority();
    var earliest = Instant.MAX;
    for (var victim : victims) {
      if (victim.facts().priority() == highest && victim.facts().started().isBefore(earliest)) {
        earliest = victim.facts().started();
      }
    }
    return earliest;
  }
}
