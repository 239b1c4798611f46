package io.gpuadmission.validation;

import io.gpuadmission.pod.GangKey;
import io.gpuadmission.pod.GangMember;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Gang members this replica admitted in the last seconds, which the pod informer may not show
 * yet. Checking a new member against the gang and recording it happen under one lock per gang,
 * so two members created at the same moment cannot both pass with different resources.
 *
 * <p>An entry only bridges the gap until the informer speaks for the pod: as soon as the informer
 * shows the pod (created, finished or deleted) the entry is {@linkplain #forget forgotten}, so a
 * deleted or failed member frees its place at once rather than after the retention time, which
 * only bounds entries for pods the informer never shows (refused later in admission).
 */
public final class RecentAdmissions {
  private record Entry(GangMember member, long admittedAtNanos) {}

  private final Map<GangKey, List<Entry>> byGang = new ConcurrentHashMap<>();
  private final long retentionNanos;
  private final LongSupplier clock;

  public RecentAdmissions(long retentionNanos, LongSupplier nanoClock) {
    this.retentionNanos = retentionNanos;
    this.clock = nanoClock;
  }

  /** Decides on a member with the gang locked; {@code decide} returns true to admit. */
  public interface Decision {
    boolean admit(List<GangMember> recentMembers);
  }

  /**
   * Runs {@code decide} with the unexpired recent members of {@code key}; records {@code member}
   * when it admits and {@code record} is true (false for dry runs, which must leave no trace).
   */
  public boolean decide(GangKey key, GangMember member, boolean record, Decision decide) {
    while (true) {
      var entries = byGang.computeIfAbsent(key, k -> new ArrayList<>());
      synchronized (entries) {
        if (byGang.get(key) != entries) {
          continue; // emptied and removed while we waited for the lock: take the current list
        }
        var now = clock.getAsLong();
        entries.removeIf(e -> now - e.admittedAtNanos() > retentionNanos);
        var recent = new LinkedHashMap<String, GangMember>();
        entries.forEach(e -> recent.put(e.member().name(), e.member()));
        recent.remove(member.name());
        var admitted = decide.admit(List.copyOf(recent.values()));
        if (admitted && record) {
          entries.removeIf(e -> e.member().name().equals(member.name()));
          entries.add(new Entry(member, now));
        }
        removeIfEmpty(key, entries);
        return admitted;
      }
    }
  }

  /**
   * Drops the entry for pod {@code podName} of the gang labelled {@code label} in {@code namespace}:
   * the informer now shows that pod (or its deletion), so it, not this ledger, says whether the
   * pod still counts.
   */
  public void forget(String namespace, String label, String podName) {
    for (var gang : byGang.entrySet()) {
      var key = gang.getKey();
      if (!key.namespace().equals(namespace) || !key.label().equals(label)) {
        continue;
      }
      var entries = gang.getValue();
      synchronized (entries) {
        entries.removeIf(e -> e.member().name().equals(podName));
        removeIfEmpty(key, entries);
      }
    }
  }

  /** Number of gangs with entries; the ledger must not grow with every gang ever seen. */
  int gangs() {
    return byGang.size();
  }

  private void removeIfEmpty(GangKey key, List<Entry> entries) {
    if (entries.isEmpty()) {
      byGang.remove(key, entries);
    }
  }
}
