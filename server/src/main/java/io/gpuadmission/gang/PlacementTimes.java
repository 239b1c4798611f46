package io.gpuadmission.gang;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How long each gang took from its last member's creation to its last bind, once per gang, for
 * gangs this replica bound all of (a new leader does not know when the old one bound).
 */
final class PlacementTimes {
  private final Map<String, Instant> boundAt = new ConcurrentHashMap<>();
  private final Set<String> measured = ConcurrentHashMap.newKeySet();

  void bound(String uid, Instant at) {
    boundAt.put(uid, at);
  }

  /** The time to report for a gang now all bound, or empty (already reported, or not all bound here). */
  Optional<Duration> placed(GangKey gang, GangStatus.Complete complete) {
    var lastCreated = complete.bound().stream().map(GangMember::created).max(Instant::compareTo).orElse(Instant.EPOCH);
    var binds = complete.bound().stream().map(m -> boundAt.get(m.uid())).toList();
    // The informer may show the last member bound before its bind has reported here: wait for it.
    if (lastCreated.equals(Instant.EPOCH) || !binds.stream().allMatch(Objects::nonNull) || !measured.add(gang + "@" + lastCreated)) {
      return Optional.empty();
    }
    return Optional.of(Duration.between(lastCreated, binds.stream().max(Instant::compareTo).orElseThrow()));
  }

  /** Forgets pods and gangs that are gone. */
  void retain(Set<GangKey> gangs, Set<String> pods) {
    boundAt.keySet().retainAll(pods);
    measured.removeIf(key -> gangs.stream().noneMatch(g -> key.startsWith(g + "@")));
  }
}
