package io.gpuadmission.gang;

import io.gpuadmission.metrics.Meters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Gangs as operators watch them: how many wait for members, cannot fit, wait for a plan or are
 * planned (on every replica, from the same pods); plans made, released and timed out (by the
 * leader); and how long a gang takes from its last member's creation to all members bound.
 */
public final class GangMetrics {
  /** Where an unplaced gang stands. */
  public enum State {
    WAITING,
    DISAGREEING,
    NO_ROOM,
    AWAITING_PLAN,
    PLANNED;

    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  private final Map<State, AtomicInteger> gangs = new EnumMap<>(State.class);
  private final Counter planned;
  private final Counter released;
  private final Counter timedOut;
  private final Timer placement;

  public GangMetrics(MeterRegistry registry) {
    // A gauge left by an earlier application in this JVM would read that application's counts.
    Meters.forget(registry, "gpu_admission_gangs");
    for (var state : State.values()) {
      var count = new AtomicInteger();
      gangs.put(state, count);
      Gauge.builder("gpu_admission_gangs", count, AtomicInteger::get)
          .description("Gangs (topology jobs) not yet placed, by state")
          .tag("state", state.label())
          .register(registry);
    }
    planned = plans(registry, "planned");
    released = plans(registry, "released");
    timedOut = plans(registry, "timed_out");
    placement =
        Timer.builder("gpu_admission_gang_placement_seconds")
            .description("From a gang's last member created to all its members bound")
            .publishPercentileHistogram()
            .register(registry);
  }

  private static Counter plans(MeterRegistry registry, String outcome) {
    return Counter.builder("gpu_admission_gang_plans_total")
        .description("Gang plans made, released (a member deleted, a stale plan) and timed out")
        .tag("outcome", outcome)
        .register(registry);
  }

  void counts(Map<State, Integer> counts) {
    for (var state : State.values()) {
      gangs.get(state).set(counts.getOrDefault(state, 0));
    }
  }

  void planned() {
    planned.increment();
  }

  void released() {
    released.increment();
  }

  void timedOut() {
    timedOut.increment();
  }

  void placed(Duration took) {
    placement.record(took);
  }
}
