package io.gpuadmission.manifests;

import io.gpuadmission.manifests.Overlays.Renderer;
import org.junit.jupiter.params.provider.MethodSource;
import static io.gpuadmission.manifests.RenderedObjects.assertServicePortReachesHttps;
import static io.gpuadmission.manifests.RenderedObjects.find;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.gpuadmission.cluster.LeaderPodLabel;
import io.gpuadmission.policy.PolicyParser;
import java.net.URI;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * The second scheduler: its KubeSchedulerConfiguration calls this service's extender paths over TLS
 * with the service's CA, its RBAC is upstream's, and the policy sends GPU pods to it.
 */
class SchedulerOverlayTest {

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("schedulerInstalls")
  void extenderIsThisServiceOverTlsWithItsCa(Renderer renderer, String dir) throws Exception {
    var objects = renderer.objects("combined".equals(dir) ? Overlays.combined() : dir);
    var configuration = schedulerConfiguration(objects);
    var extender = configuration.path("extenders").get(0);

    var url = URI.create(extender.path("urlPrefix").asText());
    assertThat(url.getScheme()).isEqualTo("https");
    var host = url.getHost().split("\\.");
    assertThat(host).hasSize(3).endsWith("svc");
    // Binds reach the Lease holder first time: the Service selects only the leader's pod, and TLS
    // checks the name the serving certificate has (the main Service's, selecting the same pods).
    var service = (Service) find(objects, "Service", host[1], host[0]);
    assertThat(service.getMetadata().getName()).isEqualTo("gpu-admission-placement");
    // Not a Service the ServiceMonitor scrapes (it selects app.kubernetes.io/name): the leader would count twice.
    assertThat(service.getMetadata().getLabels() == null ? Map.<String, String>of() : service.getMetadata().getLabels())
        .doesNotContainKey("app.kubernetes.io/name");
    assertServicePortReachesHttps(objects, service, url.getPort(), Map.of(LeaderPodLabel.LABEL, "true"));
    var serverName = extender.path("tlsConfig").path("serverName").asText().split("\\.");
    assertThat(serverName).hasSize(3).endsWith("svc");
    assertServicePortReachesHttps(objects, (Service) find(objects, "Service", serverName[1], serverName[0]), url.getPort());
    // Every verb the extender serves, preempt included, and each on its path under /extender.
    assertThat(
            List.of(
                extender.path("filterVerb").asText(),
                extender.path("prioritizeVerb").asText(),
                extender.path("preemptVerb").asText(),
                extender.path("bindVerb").asText()))
        .containsExactly("filter", "prioritize", "preempt", "bind")
        .containsExactlyInAnyOrderElementsOf(ExtenderVerbs.served());
    assertThat(url.getPath()).isEqualTo("/extender");
    assertThat(extender.path("enableHTTPS").asBoolean()).isTrue();
    assertThat(extender.path("nodeCacheCapable").asBoolean()).isTrue();
    assertThat(extender.path("ignorable").asBoolean(true)).isFalse();
    assertThat(extender.path("managedResources").findValuesAsText("name"))
        .containsExactly("aliyun.com/gpu-mem", "aliyun.com/gpu", "nvidia.com/gpu");
    assertThat(extender.path("managedResources").findValues("ignoredByScheduler"))
        .allMatch(v -> !v.asBoolean(true));

    var pod =
        ((Deployment) find(objects, "Deployment", "gpu-admission", "gpu-scheduler"))
            .getSpec()
            .getTemplate()
            .getSpec();
    var container = pod.getContainers().get(0);
    assertThat(container.getImage()).matches("registry\\.k8s\\.io/kube-scheduler:v1\\.32\\.\\d+");
    var caFile = extender.path("tlsConfig").path("caFile").asText();
    var caMount =
        container.getVolumeMounts().stream()
            .filter(m -> caFile.startsWith(m.getMountPath() + "/"))
            .findFirst()
            .orElseThrow();
    var caVolume =
        pod.getVolumes().stream()
            .filter(v -> v.getName().equals(caMount.getName()))
            .findFirst()
            .orElseThrow();
    assertThat(caVolume.getSecret().getSecretName())
        .isEqualTo(RenderedObjects.defaultOf("secretName"));
    assertThat(caVolume.getSecret().getItems())
        .extracting(i -> i.getKey() + " -> " + caMount.getMountPath() + "/" + i.getPath())
        .containsExactly("ca.crt -> " + caFile);
    var configMount =
        container.getCommand().stream()
            .filter(a -> a.startsWith("--config="))
            .findFirst()
            .orElseThrow()
            .substring(9);
    assertThat(container.getVolumeMounts())
        .anyMatch(m -> configMount.equals(m.getMountPath() + "/config.yaml"));
  }

  /**
   * The extender takes calls only from kube-scheduler's client certificate: the scheduler presents
   * the one in Secret gpu-scheduler-client, which the service issues (self-managed: its RBAC lets it
   * write that Secret) or cert-manager issues (from the CA that signs the serving certificate, named
   * as the service expects its caller).
   */
  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("schedulerInstalls")
  void schedulerPresentsTheClientCertificateTheServiceAccepts(Renderer renderer, String dir) throws Exception {
    var objects = renderer.objects("combined".equals(dir) ? Overlays.combined() : dir);
    var tls = schedulerConfiguration(objects).path("extenders").get(0).path("tlsConfig");
    var pod = ((Deployment) find(objects, "Deployment", "gpu-admission", "gpu-scheduler")).getSpec().getTemplate().getSpec();
    var secretName = io.gpuadmission.tls.CallerAuthConfig.class.getMethod("secretName").getAnnotation(io.smallrye.config.WithDefault.class).value();
    var mounted = new java.util.ArrayList<String>();
    for (var mount : pod.getContainers().get(0).getVolumeMounts()) {
      var volume = pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
      if (volume.getSecret() != null && volume.getSecret().getSecretName().equals(secretName)) {
        volume.getSecret().getItems().forEach(i -> mounted.add(i.getKey() + " -> " + mount.getMountPath() + "/" + i.getPath()));
      }
    }
    assertThat(mounted).containsExactly("tls.crt -> " + tls.path("certFile").asText(), "tls.key -> " + tls.path("keyFile").asText());

    var caller = io.gpuadmission.tls.CallerAuthConfig.class.getMethod("names").getAnnotation(io.smallrye.config.WithDefault.class).value();
    if ("combined".equals(dir)) {
      var certificates = objects.stream().filter(o -> o.getKind().equals("Certificate")).map(o -> (io.fabric8.kubernetes.api.model.GenericKubernetesResource) o).toList();
      var client = certificates.stream().filter(c -> c.getMetadata().getName().equals(secretName)).findFirst().orElseThrow();
      var serving = certificates.stream().filter(c -> c.getMetadata().getName().equals("gpu-admission-tls")).findFirst().orElseThrow();
      var spec = new com.fasterxml.jackson.databind.ObjectMapper().valueToTree(client.getAdditionalProperties().get("spec"));
      assertThat(spec.path("secretName").asText()).isEqualTo(secretName);
      assertThat(spec.path("commonName").asText()).isEqualTo(caller);
      var usages = new java.util.ArrayList<String>();
      spec.path("usages").forEach(u -> usages.add(u.asText()));
      assertThat(usages).containsExactlyInAnyOrder("client auth", "digital signature");
      assertThat(spec.path("issuerRef"))
          .isEqualTo(new com.fasterxml.jackson.databind.ObjectMapper().valueToTree(serving.getAdditionalProperties().get("spec")).path("issuerRef"));
    } else {
      var role = (Role) find(objects, "Role", "gpu-admission", "gpu-admission-certificates");
      assertThat(role.getRules()).anyMatch(r -> r.getResourceNames().contains(secretName) && r.getVerbs().containsAll(List.of("get", "update")));
    }
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("schedulerInstalls")
  void policySendsGpuPodsToTheSchedulerProfile(Renderer renderer, String dir) throws Exception {
    var objects = renderer.objects("combined".equals(dir) ? Overlays.combined() : dir);
    var profile =
        schedulerConfiguration(objects).path("profiles").get(0).path("schedulerName").asText();

    var policy = (ConfigMap) find(objects, "ConfigMap", "gpu-admission", "gpu-admission-policy");
    var parsed = PolicyParser.parse(policy.getData().get("policy.yaml"));

    assertThat(parsed.scheduling().gpuScheduler()).contains(profile);
    assertThat(parsed.topology()).isEqualTo(PolicyParser.builtInDefault().topology());
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("schedulerInstall")
  void rbacIsUpstreamsSecondSchedulerRbacPlusItsOwnLease(Renderer renderer, String dir) throws Exception {
    var objects = renderer.objects(dir);
    var election = schedulerConfiguration(objects).path("leaderElection");

    assertThat(objects)
        .filteredOn(ClusterRoleBinding.class::isInstance)
        .map(ClusterRoleBinding.class::cast)
        .filteredOn(b -> b.getSubjects().get(0).getName().equals("gpu-scheduler"))
        .extracting(b -> b.getRoleRef().getName())
        .containsExactlyInAnyOrder("system:kube-scheduler", "system:volume-scheduler");
    var reader =
        (RoleBinding)
            find(
                objects,
                "RoleBinding",
                "kube-system",
                "gpu-scheduler-extension-apiserver-authentication-reader");
    assertThat(reader.getRoleRef().getName())
        .isEqualTo("extension-apiserver-authentication-reader");
    var lease =
        (Role)
            find(
                objects,
                "Role",
                election.path("resourceNamespace").asText(),
                "gpu-scheduler-leader-election");
    assertThat(lease.getRules())
        .extracting(r -> r.getResources() + " " + r.getResourceNames() + " " + r.getVerbs())
        .containsExactly(
            "[leases] [" + election.path("resourceName").asText() + "] [get, update]",
            "[leases] [] [create]");
    assertThat(election.path("leaderElect").asBoolean()).isTrue();
  }

  private static JsonNode schedulerConfiguration(List<HasMetadata> objects) throws Exception {
    var configMap = (ConfigMap) find(objects, "ConfigMap", "gpu-admission", "gpu-scheduler-config");
    var configuration = new YAMLMapper().readTree(configMap.getData().get("config.yaml"));
    assertThat(configuration.path("apiVersion").asText())
        .isEqualTo("kubescheduler.config.k8s.io/v1");
    assertThat(configuration.path("kind").asText()).isEqualTo("KubeSchedulerConfiguration");
    return configuration;
  }

  static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> schedulerInstalls() {
    return Overlays.bothRenderers(java.util.List.of("manifests/scheduler", "combined"));
  }

  static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> schedulerInstall() {
    return Overlays.bothRenderers(java.util.List.of("manifests/scheduler"));
  }
}
