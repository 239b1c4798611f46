package io.gpuadmission.health;

import io.gpuadmission.cluster.ClusterContact;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Reports contact with the API server. Always up: every replica loses the API server at the same
 * moment, and taking them all out of the Service would refuse every GPU pod (they fail closed)
 * while the caches could still answer.
 */
@Readiness
@ApplicationScoped
public class ClusterHealthCheck implements HealthCheck {
  private final ClusterContact contact;

  public ClusterHealthCheck(ClusterContact contact) {
    this.contact = contact;
  }

  @Override
  public HealthCheckResponse call() {
    return HealthCheckResponse.named("cluster")
        .up()
        .withData("configured", contact.clusterConfigured())
        .withData("connected", contact.connected())
        .withData("secondsSinceContact", contact.secondsSinceContact())
        .build();
  }
}
