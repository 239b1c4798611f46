package io.gpuadmission.cluster;

import io.gpuadmission.policy.PolicyConfig;
import jakarta.enterprise.context.ApplicationScoped;

/** The namespace the webhook runs in, where its policy ConfigMap lives. */
@ApplicationScoped
public class WebhookNamespace {
  static final String FALLBACK = "gpu-admission";
  private final String name;

  public WebhookNamespace(PolicyConfig config, ClusterConnection cluster) {
    this.name =
        config
            .namespace()
            .or(() -> java.util.Optional.ofNullable(System.getenv("POD_NAMESPACE")))
            .orElseGet(
                () -> {
                  var fromClient = cluster.available() ? cluster.client().getNamespace() : null;
                  return fromClient == null || fromClient.isBlank() ? FALLBACK : fromClient;
                });
  }

  public String name() {
    return name;
  }
}
