package io.gpuadmission.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.ArrayList;
import java.util.List;

/** Lookups and shared checks on the objects of a rendered overlay. */
final class RenderedObjects {
  private RenderedObjects() {}

  /**
   * Every webhook calls the Service on a port that reaches the container's HTTPS port, on a path
   * the app serves.
   */
  static void assertWebhooksCallTheServiceOnExistingPaths(List<HasMetadata> objects) {
    var paths =
        java.util.Arrays.stream(io.gpuadmission.admission.AdmissionResource.class.getMethods())
            .map(m -> m.getAnnotation(jakarta.ws.rs.Path.class))
            .filter(java.util.Objects::nonNull)
            .map(p -> "/" + p.value())
            .toList();
    for (var config : webhookClientConfigs(objects)) {
      var reference = config.getService();
      var service =
          (Service) find(objects, "Service", reference.getNamespace(), reference.getName());
      assertThat(paths).contains(reference.getPath());
      assertServicePortReachesHttps(objects, service, reference.getPort());
    }
  }

  static void assertServicePortReachesHttps(List<HasMetadata> objects, Service service, int port) {
    assertServicePortReachesHttps(objects, service, port, java.util.Map.of());
  }

  /** As above, for a Service that selects only the pods that also carry {@code extraLabels}. */
  static void assertServicePortReachesHttps(
      List<HasMetadata> objects, Service service, int port, java.util.Map<String, String> extraLabels) {
    var servicePort =
        service.getSpec().getPorts().stream()
            .filter(p -> p.getPort() == port)
            .findFirst()
            .orElseThrow();
    var pod = deployment(objects, "gpu-admission").getSpec().getTemplate();
    var selected = new java.util.HashMap<>(pod.getMetadata().getLabels());
    selected.putAll(extraLabels);
    assertThat(service.getSpec().getSelector()).isEqualTo(selected);
    assertThat(pod.getSpec().getContainers().get(0).getPorts())
        .anyMatch(
            p ->
                p.getName().equals(servicePort.getTargetPort().getStrVal())
                    && p.getContainerPort() == 8443);
  }

  static List<io.fabric8.kubernetes.api.model.admissionregistration.v1.WebhookClientConfig>
      webhookClientConfigs(List<HasMetadata> objects) {
    var configs =
        new ArrayList<
            io.fabric8.kubernetes.api.model.admissionregistration.v1.WebhookClientConfig>();
    for (var object : objects) {
      if (object instanceof MutatingWebhookConfiguration m) {
        m.getWebhooks().forEach(w -> configs.add(w.getClientConfig()));
      } else if (object instanceof ValidatingWebhookConfiguration v) {
        v.getWebhooks().forEach(w -> configs.add(w.getClientConfig()));
      }
    }
    return configs;
  }

  /**
   * The default the application uses for a certificate setting, so the manifests cannot drift from
   * it.
   */
  static String defaultOf(String setting) throws NoSuchMethodException {
    return io.gpuadmission.tls.CertificateConfig.class
        .getMethod(setting)
        .getAnnotation(io.smallrye.config.WithDefault.class)
        .value();
  }

  static HasMetadata find(List<HasMetadata> objects, String kind, String namespace, String name) {
    return objects.stream()
        .filter(
            o ->
                o.getKind().equals(kind)
                    && java.util.Objects.equals(o.getMetadata().getNamespace(), namespace)
                    && o.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow(
            () ->
                new AssertionError(
                    "no " + kind + " " + namespace + "/" + name + " in the rendered overlay"));
  }

  static boolean has(List<HasMetadata> objects, String kind, String namespace, String name) {
    return objects.stream()
        .anyMatch(
            o ->
                o.getKind().equals(kind)
                    && java.util.Objects.equals(o.getMetadata().getNamespace(), namespace)
                    && o.getMetadata().getName().equals(name));
  }

  static Deployment deployment(List<HasMetadata> objects, String name) {
    return (Deployment) find(objects, "Deployment", "gpu-admission", name);
  }

  static String env(io.fabric8.kubernetes.api.model.Container container, String name) {
    return container.getEnv().stream()
        .filter(e -> e.getName().equals(name))
        .findFirst()
        .map(e -> e.getValue())
        .orElse(null);
  }
}
