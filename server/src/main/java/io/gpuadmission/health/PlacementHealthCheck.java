package io.gpuadmission.health;

import io.gpuadmission.placement.LeaderGate;
import io.smallrye.health.api.Wellness;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;

/**
 * Down while no replica holds an unexpired placement Lease, as far as this replica sees: nothing
 * binds GPU pods then. A wellness check ({@code /q/health/well}), which no probe reads: when no
 * replica can lead, all of them see it at once (an API server that does not answer, a Lease no
 * replica may write), and failing readiness would take every replica out of the Service, so that
 * the API server would refuse every GPU pod (they fail closed) instead of leaving them Pending.
 */
@Wellness
@ApplicationScoped
public class PlacementHealthCheck implements HealthCheck {
  private final LeaderGate gate;

  public PlacementHealthCheck(LeaderGate gate) {
    this.gate = gate;
  }

  @Override
  public HealthCheckResponse call() {
    var leaderless = gate.leaderless();
    return HealthCheckResponse.named("placement")
        .status(leaderless.isZero())
        .withData("leader", gate.leader())
        .withData("leading", gate.leading())
        .withData("secondsWithoutLeader", leaderless.toSeconds())
        .build();
  }
}
