package io.gpuadmission.cluster;

import io.gpuadmission.metrics.Meters;
import io.gpuadmission.placement.LeaderGate;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.gpuadmission.mode.ServerStartup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Publishes gpu_admission_placement_leader (whether this replica binds) and
 * gpu_admission_placement_leaderless_seconds (for how long no replica has held the placement
 * Lease, as this replica sees it): with no leader every GPU pod stays Pending.
 */
@ApplicationScoped
public class PlacementLeaderMetrics {
  public static final String LEADER = "gpu_admission_placement_leader";
  public static final String LEADERLESS = "gpu_admission_placement_leaderless_seconds";

  void register(@Observes ServerStartup event, MeterRegistry registry, LeaderGate gate) {
    register(registry, gate);
  }

  /** The two gauges over {@code gate}, in {@code registry}. */
  public static void register(MeterRegistry registry, LeaderGate gate) {
    Meters.forget(registry, LEADER, LEADERLESS);
    Gauge.builder(LEADER, gate, g -> g.leading() ? 1 : 0)
        .description("1 while this replica binds: it holds the placement Lease, renewed within the renew deadline, and has read the pods")
        .register(registry);
    Gauge.builder(LEADERLESS, gate, g -> g.leaderless().toMillis() / 1000.0)
        .description("Seconds for which no replica has held an unexpired placement Lease, as far as this replica sees; 0 while one does")
        .baseUnit("seconds")
        .register(registry);
  }
}
