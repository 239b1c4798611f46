package io.gpuadmission.health;

import io.gpuadmission.cluster.QuotaTreeStore;
import io.gpuadmission.teamquota.QuotaService;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Reports whether team quotas are on (and why not), and the tree in force. Always up, as the policy
 * check: a tree that breaks a rule leaves the last good tree enforced (or, when none was read, no
 * quota, with the reason), a cluster without the
 * ElasticQuotaTree CRD simply has no quotas, and taking replicas out of rotation for either would
 * only cause an outage.
 */
@Readiness
@ApplicationScoped
public class QuotaTreeHealthCheck implements HealthCheck {
  private final QuotaTreeStore store;
  private final QuotaService quotas;

  public QuotaTreeHealthCheck(QuotaTreeStore store, QuotaService quotas) {
    this.store = store;
    this.quotas = quotas;
  }

  @Override
  public HealthCheckResponse call() {
    var off = quotas.off();
    var response = HealthCheckResponse.named("quota-tree").up()
        .withData("quotas", off.isEmpty() ? "on" : "off")
        .withData("tree", store.tree().isPresent() ? store.source() : "none");
    if (!off.isEmpty()) {
      response.withData("reason", off);
    }
    store.lastError().ifPresent(error -> response.withData("lastReloadError", error));
    return response.build();
  }
}
