package io.gpuadmission.health;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** Ready only after warm-up: until then the API server would see webhook timeouts. */
@Readiness
@ApplicationScoped
public class WarmUpReadinessCheck implements HealthCheck {
  private final WarmUp warmUp;

  public WarmUpReadinessCheck(WarmUp warmUp) {
    this.warmUp = warmUp;
  }

  @Override
  public HealthCheckResponse call() {
    return HealthCheckResponse.named("warm-up")
        .status(warmUp.state() == WarmUp.State.DONE)
        .withData("detail", warmUp.detail())
        .build();
  }
}
