package io.gpuadmission.health;

import io.gpuadmission.cluster.QuotaTreeStore;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Reports the team quota tree in force. Always up, as the policy check: a tree that breaks a rule
 * leaves the last good tree enforced, and taking replicas out of rotation for it would only cause
 * an outage.
 */
@Readiness
@ApplicationScoped
public class QuotaTreeHealthCheck implements HealthCheck {
  private final QuotaTreeStore store;

  public QuotaTreeHealthCheck(QuotaTreeStore store) {
    this.store = store;
  }

  @Override
  public HealthCheckResponse call() {
    var response = HealthCheckResponse.named("quota-tree").up().withData("tree", store.tree().isPresent() ? store.source() : "none");
    store.lastError().ifPresent(error -> response.withData("lastReloadError", error));
    return response.build();
  }
}
