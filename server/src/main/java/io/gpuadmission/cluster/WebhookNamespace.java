package io.gpuadmission.cluster;

import io.gpuadmission.policy.PolicyConfig;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The namespace the webhook runs in, where its policy ConfigMap lives: the configured one, else
 * the pod's own (downward API or service account), else {@code gpu-admission}, the namespace the
 * manifests create. A kubeconfig context's namespace is deliberately not used: a webhook run from
 * a laptop must read the same ConfigMap as the deployed one.
 */
@ApplicationScoped
public class WebhookNamespace {
  static final String FALLBACK = "gpu-admission";
  private static final Path SERVICE_ACCOUNT_NAMESPACE = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  private final String name;

  public WebhookNamespace(PolicyConfig config) {
    this.name =
        config
            .namespace()
            .or(() -> Optional.ofNullable(System.getenv("POD_NAMESPACE")))
            .or(WebhookNamespace::serviceAccountNamespace)
            .orElse(FALLBACK);
  }

  public String name() {
    return name;
  }

  /**
   * The webhook's namespace for a process that runs elsewhere (the command line, in a CI pod of
   * its own): the configured one, else {@code gpu-admission}; never the process's own pod namespace.
   */
  public static String configured(PolicyConfig config) {
    return config.namespace().orElse(FALLBACK);
  }

  private static Optional<String> serviceAccountNamespace() {
    try {
      return Files.isReadable(SERVICE_ACCOUNT_NAMESPACE)
          ? Optional.of(Files.readString(SERVICE_ACCOUNT_NAMESPACE).trim()).filter(s -> !s.isEmpty())
          : Optional.empty();
    } catch (IOException unreadable) {
      return Optional.empty();
    }
  }
}
