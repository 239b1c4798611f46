package io.gpuadmission.quota;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/** A set of victim units with what ranks it: pods, priorities, the earliest start, the uids. */
record VictimSet(
    List<VictimUnit> units, int pods, int maxPriority, long sumPriority, long earliestStart, Set<String> uids, String uidKey) {
  /** Best first: fewest pods, lowest highest priority, lowest sum, youngest, then the uids. */
  static final Comparator<VictimSet> ORDER = Comparator.comparingInt(VictimSet::pods)
      .thenComparingInt(VictimSet::maxPriority)
      .thenComparingLong(VictimSet::sumPriority)
      .thenComparing(Comparator.comparingLong(VictimSet::earliestStart).reversed())
      .thenComparing(VictimSet::uidKey);

  static VictimSet of(List<VictimUnit> units) {
    var uids = new TreeSet<String>();
    units.forEach(unit -> unit.members().forEach(member -> uids.add(member.pod().uid())));
    return new VictimSet(
        List.copyOf(units),
        uids.size(),
        units.stream().mapToInt(VictimUnit::maxPriority).max().orElse(Integer.MIN_VALUE),
        units.stream().mapToLong(VictimUnit::sumPriority).sum(),
        units.stream().mapToLong(VictimUnit::earliestStart).min().orElse(Long.MAX_VALUE),
        Collections.unmodifiableSet(uids),
        String.join(",", uids));
  }

  /**
   * Every subset of {@code units} (at most {@link ReclaimPlanner#EXACT_UNITS}), grouped by pod
   * count, fewest first, each group best first; a group's sets are built when it is reached.
   */
  static Iterable<List<VictimSet>> byPodCount(List<VictimUnit> units) {
    var total = units.stream().mapToInt(unit -> unit.members().size()).sum();
    var masks = new ArrayList<List<Integer>>();
    for (var count = 0; count <= total; count++) {
      masks.add(new ArrayList<>());
    }
    for (var mask = 0; mask < 1 << units.size(); mask++) {
      var pods = 0;
      for (var i = 0; i < units.size(); i++) {
        if ((mask & 1 << i) != 0) {
          pods += units.get(i).members().size();
        }
      }
      masks.get(pods).add(mask);
    }
    return () -> masks.stream().filter(group -> !group.isEmpty()).map(group -> {
      var sets = new ArrayList<VictimSet>(group.size());
      for (var mask : group) {
        var chosen = new ArrayList<VictimUnit>();
        for (var i = 0; i < units.size(); i++) {
          if ((mask & 1 << i) != 0) {
            chosen.add(units.get(i));
          }
        }
        sets.add(of(chosen));
      }
      sets.sort(ORDER);
      return (List<VictimSet>) sets;
    }).iterator();
  }
}
