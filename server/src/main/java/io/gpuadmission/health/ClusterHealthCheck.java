package io.gpuadmission.health;

import io.gpuadmission.cluster.ClusterContact;
import io.gpuadmission.cluster.FirstSync;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Reports contact with the API server. Down until the cluster has been read once (every informer
 * listed, the policy ConfigMap read or found absent): before that the caches are empty and the
 * policy is the built-in default, not the cluster's. Up from then on, whatever the contact: every
 * replica loses the API server at the same moment, and taking them all out of the Service would
 * refuse every GPU pod (they fail closed) while the caches could still answer.
 */
@Readiness
@ApplicationScoped
public class ClusterHealthCheck implements HealthCheck {
  private final ClusterContact contact;
  private final FirstSync firstSync;

  public ClusterHealthCheck(ClusterContact contact, FirstSync firstSync) {
    this.contact = contact;
    this.firstSync = firstSync;
  }

  @Override
  public HealthCheckResponse call() {
    var read = firstSync.done();
    var response = HealthCheckResponse.named("cluster")
        .status(read)
        .withData("configured", contact.clusterConfigured())
        .withData("connected", contact.connected())
        .withData("secondsSinceContact", contact.secondsSinceContact());
    if (!read) {
      response.withData("waitingFor", firstSync.waitingFor());
    }
    return response.build();
  }
}
