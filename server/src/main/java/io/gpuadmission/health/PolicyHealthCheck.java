package io.gpuadmission.health;

import io.gpuadmission.policy.PolicyStatus;
import io.gpuadmission.policy.PolicyStore;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Reports which policy is in force. Always up: an invalid ConfigMap leaves the last good policy
 * serving, and taking replicas out of rotation for it would only cause an outage.
 */
@Readiness
@ApplicationScoped
public class PolicyHealthCheck implements HealthCheck {
  private final PolicyStore store;
  private final PolicyStatus status;

  public PolicyHealthCheck(PolicyStore store, PolicyStatus status) {
    this.store = store;
    this.status = status;
  }

  @Override
  public HealthCheckResponse call() {
    var active = store.active();
    var response =
        HealthCheckResponse.named("policy")
            .up()
            .withData("source", active.source().name().toLowerCase(java.util.Locale.ROOT))
            .withData("generation", active.generation());
    status.lastError().ifPresent(error -> response.withData("lastReloadError", error));
    return response.build();
  }
}
