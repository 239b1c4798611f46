package io.gpuadmission.tls;

import io.fabric8.kubernetes.api.model.admissionregistration.v1.WebhookClientConfig;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Objects;

/**
 * Writes the CA into the caBundle of this service's own webhooks, as cert-manager's CA injector
 * does: only webhooks that call our Service, only when the value differs (so replicas that agree do
 * not write at all), each write conditional on the version read.
 */
public final class CaBundleInjector {
  private final KubernetesClient client;
  private final String configurationName;
  private final String serviceNamespace;
  private final String serviceName;

  public CaBundleInjector(
      KubernetesClient client,
      String configurationName,
      String serviceNamespace,
      String serviceName) {
    this.client = client;
    this.configurationName = configurationName;
    this.serviceNamespace = serviceNamespace;
    this.serviceName = serviceName;
  }

  /** What {@link #inject} did: webhooks changed, and configurations not (yet) in the cluster. */
  public record Injection(int changedWebhooks, int missingConfigurations) {}

  /** Writes {@code caPem} where it differs; a configuration that does not exist is skipped. */
  public Injection inject(String caPem) {
    var caBundle = Base64.getEncoder().encodeToString(caPem.getBytes(StandardCharsets.US_ASCII));
    var webhooks = client.admissionRegistration().v1();
    var changed = 0;
    var missing = 0;
    var mutating = webhooks.mutatingWebhookConfigurations().withName(configurationName).get();
    if (mutating != null) {
      var n =
          update(mutating.getWebhooks().stream().map(w -> w.getClientConfig()).toList(), caBundle);
      if (n > 0) {
        webhooks.mutatingWebhookConfigurations().resource(mutating).update();
        changed += n;
      }
    } else {
      missing++;
    }
    var validating = webhooks.validatingWebhookConfigurations().withName(configurationName).get();
    if (validating != null) {
      var n =
          update(
              validating.getWebhooks().stream().map(w -> w.getClientConfig()).toList(), caBundle);
      if (n > 0) {
        webhooks.validatingWebhookConfigurations().resource(validating).update();
        changed += n;
      }
    } else {
      missing++;
    }
    return new Injection(changed, missing);
  }

  private int update(List<WebhookClientConfig> clientConfigs, String caBundle) {
    var changed = 0;
    for (var config : clientConfigs) {
      var service = config == null ? null : config.getService();
      if (service != null
          && serviceName.equals(service.getName())
          && serviceNamespace.equals(service.getNamespace())
          && !Objects.equals(caBundle, config.getCaBundle())) {
        config.setCaBundle(caBundle);
        changed++;
      }
    }
    return changed;
  }
}
