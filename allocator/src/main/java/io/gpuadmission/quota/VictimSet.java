package io.gpuadmission.quota;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * A set of victim units with what ranks it: the PodDisruptionBudgets it violates, pods, priorities,
 * the earliest start, the uids.
 */
record VictimSet(
    List<VictimUnit> units, int pdbViolations, int pods, int maxPriority, long sumPriority, long earliestStart, Set<String> uids,
    String uidKey) {
  /**
   * Best first: fewest budget violations (kube-scheduler's first rank), fewest pods, lowest highest
   * priority, lowest sum, youngest, then the uids.
   */
  static final Comparator<VictimSet> ORDER = Comparator.comparingInt(VictimSet::pdbViolations)
      .thenComparingInt(VictimSet::pods)
      .thenComparingInt(VictimSet::maxPriority)
      .thenComparingLong(VictimSet::sumPriority)
      .thenComparing(Comparator.comparingLong(VictimSet::earliestStart).reversed())
      .thenComparing(VictimSet::uidKey);

  static VictimSet of(List<VictimUnit> units, DisruptionAllowance budgets) {
    var uids = new TreeSet<String>();
    units.forEach(unit -> unit.members().forEach(member -> uids.add(member.pod().uid())));
    return new VictimSet(
        List.copyOf(units),
        budgets.violations(units.stream().flatMap(unit -> unit.members().stream()).distinct().toList()),
        uids.size(),
        units.stream().mapToInt(VictimUnit::maxPriority).max().orElse(Integer.MIN_VALUE),
        units.stream().mapToLong(VictimUnit::sumPriority).sum(),
        units.stream().mapToLong(VictimUnit::earliestStart).min().orElse(Long.MAX_VALUE),
        Collections.unmodifiableSet(uids),
        String.join(",", uids));
  }

  /**
   * Every subset of {@code units} (at most {@link ReclaimPlanner#EXACT_UNITS}), grouped by budget
   * violations and pod count, fewest first, each group best first. When no budget counts any of
   * the units, every set violates none and a group's sets are built only when it is reached.
   */
  static Iterable<List<VictimSet>> inRankOrder(List<VictimUnit> units, DisruptionAllowance budgets) {
    if (!budgets.countsAny(members(units))) {
      return byPodCount(units, budgets);
    }
    var all = new ArrayList<VictimSet>(1 << units.size());
    for (var mask = 0; mask < 1 << units.size(); mask++) {
      all.add(of(chosen(units, mask), budgets));
    }
    all.sort(ORDER);
    var groups = new ArrayList<List<VictimSet>>();
    for (var set : all) {
      var last = groups.isEmpty() ? null : groups.get(groups.size() - 1).get(0);
      if (last == null || last.pdbViolations() != set.pdbViolations() || last.pods() != set.pods()) {
        groups.add(new ArrayList<>());
      }
      groups.get(groups.size() - 1).add(set);
    }
    return groups;
  }

  /**
   * Every subset of {@code units}, grouped by pod count, fewest first, each group best first (so
   * within a group those violating no budget come first); a group's sets are built when it is reached.
   */
  static Iterable<List<VictimSet>> byPodCount(List<VictimUnit> units, DisruptionAllowance budgets) {
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
        sets.add(of(chosen(units, mask), budgets));
      }
      sets.sort(ORDER);
      return (List<VictimSet>) sets;
    }).iterator();
  }

  static List<RunningPod> members(List<VictimUnit> units) {
    return units.stream().flatMap(unit -> unit.members().stream()).toList();
  }

  private static List<VictimUnit> chosen(List<VictimUnit> units, int mask) {
    var chosen = new ArrayList<VictimUnit>();
    for (var i = 0; i < units.size(); i++) {
      if ((mask & 1 << i) != 0) {
        chosen.add(units.get(i));
      }
    }
    return chosen;
  }
}
