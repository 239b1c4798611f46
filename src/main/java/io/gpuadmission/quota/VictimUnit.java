package io.gpuadmission.quota;

import java.util.Comparator;
import java.util.List;

/** What reclaim evicts as one: a pod, or every member of a gang (wherever they run). */
record VictimUnit(String key, List<RunningPod> members) {
  /** Cheapest first: fewer pods, lower priority, younger, then by key. */
  static final Comparator<VictimUnit> CHEAPEST = Comparator.comparingInt((VictimUnit unit) -> unit.members().size())
      .thenComparingInt(VictimUnit::maxPriority)
      .thenComparing(Comparator.comparingLong(VictimUnit::earliestStart).reversed())
      .thenComparing(VictimUnit::key);

  VictimUnit {
    members = List.copyOf(members);
  }

  int maxPriority() {
    return members.stream().mapToInt(member -> member.pod().priority()).max().orElse(Integer.MIN_VALUE);
  }

  long sumPriority() {
    return members.stream().mapToLong(member -> member.pod().priority()).sum();
  }

  long earliestStart() {
    return members.stream().mapToLong(member -> member.pod().startedAtMillis()).min().orElse(Long.MAX_VALUE);
  }
}
