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
   * the order they came in. Victims terminating already are not counted: they go anyway, so a
   * GPU they free ranks before one that needs an eviction.
   */
  public static final Comparator<NodeVictims> BETTER_FIRST =
      Comparator.comparingInt(NodeVictims::pdbViolations)
          .thenComparingLong(NodeVictims::highestPriority)
          .thenComparingLong(NodeVictims::prioritySum)
          .thenComparingLong(NodeVictims::evictions)
          .thenComparing(NodeVictims::earliestStartOfHighest, Comparator.reverseOrder());

  /** The victims not terminating yet: those this preemption deletes. */
  public List<Victim> evicted() {
    return victims.stream().filter(v -> !v.facts().terminating()).toList();
  }

  /** The victims terminating already, whose GPUs the pod waits for. */
  public List<Victim> alreadyTerminating() {
    return victims.stream().filter(v -> v.facts().terminating()).toList();
  }

  long evictions() {
    return evicted().size();
  }

  long highestPriority() {
    var highest = Long.MIN_VALUE;
    for (var victim : evicted()) {
      highest = Math.max(highest, victim.facts().priority());
    }
    return highest;
  }

  long prioritySum() {
    long sum = 0;
    for (var victim : evicted()) {
      sum += victim.facts().priority() + (1L << 31);
    }
    return sum;
  }

  /** kube-scheduler's {@code GetEarliestPodStartTime}: the earliest start among the highest-priority victims. */
  Instant earliestStartOfHighest() {
    var highest = highestPriority();
    var earliest = Instant.MAX;
    for (var victim : evicted()) {
      if (victim.facts().priority() == highest && victim.facts().started().isBefore(earliest)) {
        earliest = victim.facts().started();
      }
    }
    return earliest;
  }
}
