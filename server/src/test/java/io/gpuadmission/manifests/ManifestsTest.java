package io.gpuadmission.manifests;

import io.gpuadmission.manifests.Overlays.Renderer;
import org.junit.jupiter.params.provider.EnumSource;
import static io.gpuadmission.manifests.RenderedObjects.assertServicePortReachesHttps;
import static io.gpuadmission.manifests.RenderedObjects.assertWebhooksCallTheServiceOnExistingPaths;
import static io.gpuadmission.manifests.RenderedObjects.defaultOf;
import static io.gpuadmission.manifests.RenderedObjects.deployment;
import static io.gpuadmission.manifests.RenderedObjects.env;
import static io.gpuadmission.manifests.RenderedObjects.find;
import static io.gpuadmission.manifests.RenderedObjects.has;
import static io.gpuadmission.manifests.RenderedObjects.webhookClientConfigs;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The manifests parse as Kubernetes objects and keep the contract the webhook relies on; every
 * overlay renders (kubectl kustomize, offline) to objects that fit together.
 */
class ManifestsTest {
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
  /** A key (other than an env var's name) whose value is an ALL_CAPS_TOKEN: text to fill in. */
  private static final java.util.regex.Pattern PLACEHOLDER_VALUE =
      java.util.regex.Pattern.compile("(?m)^\\s*(?:- )?(?!name:)[\\w.-]+:\\s+[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\\s*$");

  /** Custom resources the overlays create; everything else must be a kind of the fabric8 model. */
  private static final List<String> CUSTOM_KINDS =
      List.of(
          "cert-manager.io Issuer",
          "cert-manager.io Certificate",
          "monitoring.coreos.com ServiceMonitor",
          "monitoring.coreos.com PrometheusRule");

  @SuppressWarnings("unchecked")
  private static List<HasMetadata> load(String file) throws IOException {
    var parsed = SERIALIZATION.unmarshal(Files.readString(Path.of("manifests", file)));
    if (parsed instanceof List<?> list) {
      list.removeIf(java.util.Objects::isNull);
    }
    return parsed instanceof List<?> list
        ? new ArrayList<>((List<HasMetadata>) list)
        : List.of((HasMetadata) parsed);
  }

  @Test
  void webhooksAreSideEffectFreeV1WithShortTimeoutsAndExpectedFailurePolicies() throws IOException {
    var objects = load("base/webhooks.yaml");
    var mutating = (MutatingWebhookConfiguration) objects.get(0);
    var validating = (ValidatingWebhookConfiguration) objects.get(1);

    assertThat(mutating.getWebhooks())
        .extracting(
            w ->
                w.getName()
                    + " "
                    + w.getFailurePolicy()
                    + " "
                    + w.getClientConfig().getService().getPath())
        .containsExactly(
            "gpu-pods.mutate.gpu-admission.io Fail /mutate",
            "other-pods.mutate.gpu-admission.io Ignore /mutate");
    assertThat(mutating.getWebhooks())
        .allSatisfy(
            w -> {
              assertThat(w.getSideEffects()).isEqualTo("None");
              assertThat(w.getAdmissionReviewVersions()).containsExactly("v1");
              assertThat(w.getReinvocationPolicy()).isEqualTo("IfNeeded");
              assertThat(w.getTimeoutSeconds()).isLessThanOrEqualTo(5);
              assertThat(w.getNamespaceSelector().getMatchExpressions().get(0).getValues())
                  .contains("kube-system", "gpu-admission");
            });
    assertThat(validating.getWebhooks())
        .extracting(
            w ->
                w.getName()
                    + " "
                    + w.getFailurePolicy()
                    + " "
                    + w.getClientConfig().getService().getPath())
        .containsExactly(
            "pods.validate.gpu-admission.io Fail /validate",
            "workloads.validate.gpu-admission.io Ignore /validate",
            "policy.validate.gpu-admission.io Ignore /validate",
            "quotas.validate.gpu-admission.io Ignore /validate");
    assertThat(validating.getWebhooks())
        .allSatisfy(w -> assertThat(w.getSideEffects()).isEqualTo("None"));
  }

  @Test
  void localVariantCallsTheWebhookOnLoopbackWithTheSamePaths() throws IOException {
    var local = (MutatingWebhookConfiguration) load("webhooks-local.yaml").get(0);
    var validating = (ValidatingWebhookConfiguration) load("webhooks-local.yaml").get(1);

    assertThat(local.getWebhooks())
        .extracting(w -> w.getClientConfig().getUrl())
        .containsExactly("https://127.0.0.1:8443/mutate", "https://127.0.0.1:8443/mutate");
    assertThat(validating.getWebhooks())
        .extracting(w -> w.getClientConfig().getUrl())
        .containsOnly("https://127.0.0.1:8443/validate");
  }

  @Test
  void deploymentRunsTwoHardenedReplicasWithProbesOnTheTlsPort() throws IOException {
    var objects = load("base/deployment.yaml");
    var deployment = (Deployment) objects.stream().filter(Deployment.class::isInstance).findFirst().orElseThrow();
    var container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);

    assertThat(objects)
        .extracting(HasMetadata::getKind)
        .containsExactlyInAnyOrder("Deployment", "PodDisruptionBudget", "Service");
    assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
    assertThat(deployment.getSpec().getTemplate().getSpec().getAffinity().getPodAntiAffinity())
        .isNotNull();
    assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
    assertThat(deployment.getSpec().getTemplate().getSpec().getSecurityContext().getRunAsNonRoot())
        .isTrue();
    assertThat(container.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/q/health/ready");
    assertThat(container.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/q/health/live");
    assertThat(container.getReadinessProbe().getHttpGet().getScheme()).isEqualTo("HTTPS");
  }

  @Test
  void schedulerReachesTheExtenderOnItsNodePortWithEveryVerb() throws IOException {
    var config = new com.fasterxml.jackson.dataformat.yaml.YAMLMapper().readTree(Path.of("manifests/control-plane/kube-scheduler-config.yaml").toFile());
    var extender = config.path("extenders").get(0);
    var service = (io.fabric8.kubernetes.api.model.Service) load("control-plane/extender-service.yaml").get(0);

    assertThat(config.path("kind").asText()).isEqualTo("KubeSchedulerConfiguration");
    assertThat(extender.path("urlPrefix").asText()).isEqualTo("https://127.0.0.1:" + service.getSpec().getPorts().get(0).getNodePort() + "/extender");
    assertThat(List.of("filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb")).extracting(k -> extender.path(k).asText())
        .containsExactly("filter", "prioritize", "preempt", "bind")
        .containsExactlyInAnyOrderElementsOf(ExtenderVerbs.served());
    assertThat(extender.path("nodeCacheCapable").asBoolean()).isTrue();
    assertThat(extender.path("enableHTTPS").asBoolean()).isTrue();
    // The extender answers only kube-scheduler's client certificate (docs/install.md says where it comes from).
    assertThat(extender.path("tlsConfig").path("certFile").asText()).isEqualTo("/etc/kubernetes/gpu-admission/scheduler.crt");
    assertThat(extender.path("tlsConfig").path("keyFile").asText()).isEqualTo("/etc/kubernetes/gpu-admission/scheduler.key");
    assertThat(extender.path("managedResources").findValuesAsText("name")).containsExactly("aliyun.com/gpu-mem", "aliyun.com/gpu", "nvidia.com/gpu");
    assertThat(service.getSpec().getType()).isEqualTo("NodePort");
    // Only the Lease holder's pod: binds reach the leader on the first attempt.
    assertThat(service.getSpec().getSelector())
        .containsOnly(Map.entry("app.kubernetes.io/name", "gpu-admission"), Map.entry(io.gpuadmission.cluster.LeaderPodLabel.LABEL, "true"));
    // The RBAC bind needs is checked against the requests it makes: LeastPrivilegeTest.
    assertThat(Files.readString(Path.of("manifests/control-plane/kustomization.yaml"))).contains("- extender-service.yaml");
    assertThat(Files.readString(Path.of("manifests/base/kustomization.yaml"))).doesNotContain("extender-service.yaml");
  }

  @Test
  void everyManifestParses() throws IOException {
    for (var file :
        List.of(
            "base/namespace.yaml",
            "base/rbac.yaml",
            "base/policy-configmap.yaml",
            "cert-manager/certificate.yaml",
            "webhooks-local.yaml")) {
      assertThat(load(file)).as(file).isNotEmpty();
    }
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("overlays")
  void everyOverlayRendersKnownKindsWithConsistentNamesAndNoPlaceholder(Renderer renderer, String dir)
      throws Exception {
    var yaml = renderer.render(dir);
    assertThat(PLACEHOLDER_VALUE.matcher(yaml).results().map(m -> m.group()).toList())
        .as("values left as placeholders to fill in")
        .isEmpty();
    assertThat(yaml)
        .doesNotContain("CA_BUNDLE")
        .doesNotContainIgnoringCase("placeholder")
        .doesNotContain("example.com");

    var objects = Overlays.objects(yaml);
    var ids = new java.util.HashSet<String>();
    for (var object : objects) {
      var id =
          object.getKind()
              + " "
              + object.getMetadata().getNamespace()
              + "/"
              + object.getMetadata().getName();
      assertThat(ids.add(id)).as("%s appears once", id).isTrue();
      if (object instanceof GenericKubernetesResource) {
        assertThat(object.getApiVersion().split("/")[0] + " " + object.getKind())
            .as("%s is a kind of the fabric8 model or an expected CRD", id)
            .isIn(CUSTOM_KINDS);
      }
      if (object instanceof Namespaced || object instanceof GenericKubernetesResource) {
        assertThat(object.getMetadata().getNamespace())
            .as(id)
            // kube-system only for RBAC: reading ACK's unhealthy-GPU ConfigMaps and, for the
            // second scheduler, the API server's authentication config.
            .isIn(
                "gpu-admission",
                // The node agent's own namespace (a hostPath, which gpu-admission's Pod Security
                // level refuses): its objects only.
                object.getMetadata().getName().startsWith("gpu-admission-node") ? "gpu-admission-node" : "gpu-admission",
                object instanceof RoleBinding || object instanceof io.fabric8.kubernetes.api.model.rbac.Role
                    ? "kube-system"
                    : "gpu-admission");
      } else {
        assertThat(object.getMetadata().getNamespace()).as("%s is cluster-scoped", id).isNull();
      }
      if (object instanceof RoleBinding binding) {
        assertSubjectsExist(objects, binding.getSubjects(), id);
        if ("Role".equals(binding.getRoleRef().getKind())
            && !"kube-system".equals(binding.getMetadata().getNamespace())) {
          assertThat(
                  has(
                      objects,
                      "Role",
                      binding.getMetadata().getNamespace(),
                      binding.getRoleRef().getName()))
              .as(id)
              .isTrue();
        }
      }
      if (object instanceof ClusterRoleBinding binding) {
        assertSubjectsExist(objects, binding.getSubjects(), id);
        if (!binding.getRoleRef().getName().startsWith("system:")) {
          assertThat(has(objects, "ClusterRole", null, binding.getRoleRef().getName()))
              .as(id)
              .isTrue();
        }
      }
    }
    assertWebhooksCallTheServiceOnExistingPaths(objects);
  }

  @Test
  void placeholderCheckCatchesValuesToFillInButNotEnvironmentVariableNames() {
    assertThat(PLACEHOLDER_VALUE.matcher("    - ipBlock:\n        cidr: API_SERVER_CIDR\n").find()).isTrue();
    assertThat(PLACEHOLDER_VALUE.matcher("      caBundle: CA_BUNDLE\n").find()).isTrue();
    assertThat(PLACEHOLDER_VALUE.matcher("        - name: POD_NAMESPACE\n          value: x\n").find()).isFalse();
  }

  static Stream<org.junit.jupiter.params.provider.Arguments> overlays() throws IOException {
    return Overlays.bothRenderers(Stream.concat(Overlays.ALL.stream(), Stream.of(Overlays.combined())).toList());
  }

  @ParameterizedTest
  @EnumSource(Renderer.class)
  void baseInstallMakesItsOwnCertificateWithJustTheAccessItNeeds(Renderer renderer) throws Exception {
    var objects = renderer.objects("manifests");
    var container =
        deployment(objects, "gpu-admission")
            .getSpec()
            .getTemplate()
            .getSpec()
            .getContainers()
            .get(0);

    assertThat(env(container, "GPU_ADMISSION_TLS_SELF_MANAGED")).isEqualTo("true");
    assertThat(deployment(objects, "gpu-admission").getSpec().getTemplate().getSpec().getVolumes())
        .noneMatch(v -> v.getSecret() != null);
    assertThat(webhookClientConfigs(objects))
        .hasSize(6)
        .allSatisfy(c -> assertThat(c.getCaBundle()).isNull());
    var secret = defaultOf("secretName");
    var webhooks = defaultOf("webhookConfigurationName");
    var role = (Role) find(objects, "Role", "gpu-admission", "gpu-admission-certificates");
    assertThat(role.getRules())
        .extracting(r -> r.getResources() + " " + r.getResourceNames() + " " + r.getVerbs())
        // The serving certificate's Secret and kube-scheduler's client certificate's.
        .containsExactly(
            "[secrets] [" + secret + ", " + io.gpuadmission.tls.CallerAuthConfig.class.getMethod("secretName")
                .getAnnotation(io.smallrye.config.WithDefault.class).value() + "] [get, update]",
            "[secrets] [] [create]");
    var clusterRole =
        (ClusterRole) find(objects, "ClusterRole", null, "gpu-admission-certificates");
    assertThat(clusterRole.getRules())
        .extracting(r -> r.getResources() + " " + r.getResourceNames() + " " + r.getVerbs())
        .containsExactly(
            "[mutatingwebhookconfigurations, validatingwebhookconfigurations] ["
                + webhooks
                + "] [get, update]");
    assertThat(find(objects, "MutatingWebhookConfiguration", null, webhooks)).isNotNull();
    assertThat(find(objects, "ValidatingWebhookConfiguration", null, webhooks)).isNotNull();
  }

  @ParameterizedTest
  @EnumSource(Renderer.class)
  void certManagerOverlayInjectsTheCaAndTurnsSelfManagementOff(Renderer renderer) throws Exception {
    var objects = renderer.objects("manifests/cert-manager");
    var pod = deployment(objects, "gpu-admission").getSpec().getTemplate().getSpec();
    var container = pod.getContainers().get(0);

    assertThat(env(container, "GPU_ADMISSION_TLS_SELF_MANAGED")).isEqualTo("false");
    var mount =
        container.getVolumeMounts().stream()
            .filter(m -> "tls".equals(m.getName()))
            .findFirst()
            .orElseThrow();
    assertThat(env(container, "GPU_ADMISSION_TLS_CERT"))
        .isEqualTo(mount.getMountPath() + "/tls.crt");
    assertThat(env(container, "GPU_ADMISSION_TLS_KEY"))
        .isEqualTo(mount.getMountPath() + "/tls.key");
    var volume =
        pod.getVolumes().stream().filter(v -> "tls".equals(v.getName())).findFirst().orElseThrow();
    assertThat(volume.getSecret().getSecretName()).isEqualTo("gpu-admission-tls");
    assertThat(volume.getEmptyDir()).isNull();
    var certificate =
        (GenericKubernetesResource)
            find(objects, "Certificate", "gpu-admission", "gpu-admission-tls");
    assertThat(certificate.get("spec", "secretName").toString()).isEqualTo("gpu-admission-tls");
    assertThat(certificate.get("spec", "dnsNames").toString())
        .contains("gpu-admission.gpu-admission.svc");
    for (var kind : List.of("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")) {
      assertThat(find(objects, kind, null, "gpu-admission").getMetadata().getAnnotations())
          .containsEntry("cert-manager.io/inject-ca-from", "gpu-admission/gpu-admission-tls");
    }
    assertThat(objects)
        .noneMatch(o -> o.getMetadata().getName().equals("gpu-admission-certificates"));
  }

  @ParameterizedTest
  @EnumSource(Renderer.class)
  void certManagerCaKeepsItsKeyAcrossRenewalsAndOutlivesServingCertificates(Renderer renderer) throws Exception {
    var objects = renderer.objects("manifests/cert-manager");
    var ca = (GenericKubernetesResource) find(objects, "Certificate", "gpu-admission", "gpu-admission-ca");
    var serving = (GenericKubernetesResource) find(objects, "Certificate", "gpu-admission", "gpu-admission-tls");

    // Same key, same name: a serving certificate from the renewed CA verifies against the previous
    // CA copy that the API server and the scheduler hold, so no CA renewal breaks their calls.
    assertThat((Object) ca.get("spec", "isCA")).isEqualTo(true);
    assertThat((Object) ca.get("spec", "privateKey", "rotationPolicy")).isEqualTo("Never");
    var caDuration = hours(ca.get("spec", "duration"));
    var caRenewBefore = hours(ca.get("spec", "renewBefore"));
    assertThat(caRenewBefore).as("the previous CA copy stays good long enough to restart the scheduler once")
        .isGreaterThanOrEqualTo(hours(serving.get("spec", "duration")) * 2);
    assertThat(caDuration).isGreaterThan(caRenewBefore * 2);
  }

  private static long hours(Object goDuration) {
    var text = String.valueOf(goDuration);
    assertThat(text).matches("\\d+h");
    return Long.parseLong(text.substring(0, text.length() - 1));
  }

  /** Every subject a binding names is a ServiceAccount the rendered install creates. */
  private static void assertSubjectsExist(List<HasMetadata> objects, List<io.fabric8.kubernetes.api.model.rbac.Subject> subjects, String id) {
    assertThat(subjects).allSatisfy(subject -> assertThat(has(objects, "ServiceAccount", subject.getNamespace(), subject.getName())).as(id).isTrue());
  }
}
