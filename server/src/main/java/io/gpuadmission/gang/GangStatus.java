package io.gpuadmission.gang;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Where a gang stands, from its members alone: disagreeing, waiting for members, or complete. */
public sealed interface GangStatus {
  /** Members that cannot form one gang (created before the validating webhook, or around it). */
  record Disagreeing(String reason) implements GangStatus {}

  /** Fewer members exist than the gang's replica count. */
  record Waiting(int exist, int expected) implements GangStatus {}

  /** Every member exists; {@code unbound} still need a place (sorted by name). */
  record Complete(int expected, int gpusEach, List<GangMember> bound, List<GangMember> unbound) implements GangStatus {
    public Complete {
      bound = List.copyOf(bound);
      unbound = List.copyOf(unbound);
    }

    /** True when the members' GPUs must be NVLink-connected. */
    public boolean nvlink() {
      return unbound.stream().anyMatch(GangMember::nvlink);
    }

    /** The whole-GPU resource the members ask (the first pending member's: members agree on their GPUs). */
    public String resource() {
      return unbound.isEmpty() ? (bound.isEmpty() ? "" : bound.get(0).resource()) : unbound.get(0).resource();
    }

    /** One member per node when members use host ports, else no limit. */
    public int perNode() {
      return unbound.stream().anyMatch(m -> !m.hostPorts().isEmpty()) ? 1 : Math.max(1, unbound.size());
    }
  }

  /**
   * The status of one gang's members (all of one {@link GangKey}); {@code replicaLabel} names the
   * label in messages.
   */
  static GangStatus of(List<GangMember> members, String replicaLabel) {
    var sorted = new ArrayList<>(members);
    sorted.sort(Comparator.comparing(GangMember::name));
    var replicas = group(sorted, GangMember::replicas);
    if (replicas.size() > 1) {
      return new Disagreeing("members disagree on " + replicaLabel + ": " + describe(replicas, v -> "\"" + v + "\""));
    }
    var gpus = group(sorted, m -> Integer.toString(m.gpus()));
    if (gpus.size() > 1) {
      return new Disagreeing("members ask for different numbers of whole GPUs: " + describe(gpus, v -> v));
    }
    int expected;
    try {
      expected = Integer.parseInt(sorted.get(0).replicas().trim());
    } catch (NumberFormatException notANumber) {
      expected = 0;
    }
    if (expected <= 0) {
      return new Disagreeing(replicaLabel + " is \"" + sorted.get(0).replicas() + "\", not a positive number of members");
    }
    if (sorted.size() > expected) {
      return new Disagreeing(sorted.size() + " members exist for " + replicaLabel + " \"" + expected + "\": " + names(sorted));
    }
    if (sorted.size() < expected) {
      return new Waiting(sorted.size(), expected);
    }
    var bound = sorted.stream().filter(GangMember::bound).toList();
    var unbound = sorted.stream().filter(m -> !m.bound()).toList();
    return new Complete(expected, sorted.get(0).gpus(), bound, unbound);
  }

  private static Map<String, List<GangMember>> group(List<GangMember> members, java.util.function.Function<GangMember, String> by) {
    var groups = new TreeMap<String, List<GangMember>>();
    for (var member : members) {
      groups.computeIfAbsent(by.apply(member), k -> new ArrayList<>()).add(member);
    }
    return groups;
  }

  private static String describe(Map<String, List<GangMember>> groups, java.util.function.UnaryOperator<String> value) {
    var parts = new ArrayList<String>();
    groups.forEach((v, members) -> parts.add(value.apply(v) + " (" + names(members) + ")"));
    return String.join(", ", parts);
  }

  private static String names(List<GangMember> members) {
    return String.join(", ", members.stream().map(GangMember::name).toList());
  }
}
