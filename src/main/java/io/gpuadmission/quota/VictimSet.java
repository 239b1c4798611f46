package io.gpuadmission.quota;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/** A set of victim units with what ranks it: pods, priorities, the earliest start, the uids. */
record VictimSet(List<VictimUnit> units, int pods, int maxPriority, long sumPriority, long earliestStart, Set<String> uids) {
  /** Best first: fewest pods, lowest highest priority, lowest sum, youngest, then the uids. */
  static final Comparator<VictimSet> ORDER = Comparator.comparingInt(VictimSet::pods)
      .thenComparingInt(VictimSet::maxPriority)
      .thenComparingLong(VictimSet::sumPriority)
      .thenComparing(Comparator.comparingLong(VictimSet::earliestStart).reversed())
      .thenComparing(set -> String.join(",", set.uids()));

  static VictimSet of(List<VictimUnit> units) {
    var uids = new TreeSet<String>();
    units.forEach(unit -> unit.members().forEach(member -> uids.add(member.pod().uid())));
    return new VictimSet(
        List.copyOf(units),
        uids.size(),
        units.stream().mapToInt(VictimUnit::maxPriority).max().orElse(Integer.MIN_VALUE),
        units.stream().mapToLong(VictimUnit::sumPriority).sum(),
        units.stream().mapToLong(VictimUnit::earliestStart).min().orElse(Long.MAX_VALUE),
        Collections.unmodifiableSet(uids));
  }

  /** Every subset of {@code units} (at most {@link ReclaimPlanner#EXACT_UNITS}), best first. */
  static List<VictimSet> all(List<VictimUnit> units) {
    var sets = new ArrayList<VictimSet>(1 << units.size());
    for (var mask = 0; mask < 1 << units.size(); mask++) {
      var chosen = new ArrayList<VictimUnit>();
      for (var i = 0; i < units.size(); i++) {
        if ((mask & 1 << i) != 0) {
          chosen.add(units.get(i));
        }
      }
      sets.add(of(chosen));
    }
    sets.sort(ORDER);
    return sets;
  }
}
