package io.gpuadmission.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The manifests parse as Kubernetes objects and keep the contract the webhook relies on. */
class ManifestsTest {
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  @SuppressWarnings("unchecked")
  private static List<HasMetadata> load(String file) throws IOException {
    var parsed = SERIALIZATION.unmarshal(Files.readString(Path.of("manifests", file)));
    return parsed instanceof List<?> list ? new ArrayList<>((List<HasMetadata>) list) : List.of((HasMetadata) parsed);
  }

  @Test
  void webhooksAreSideEffectFreeV1WithShortTimeoutsAndExpectedFailurePolicies() throws IOException {
    var objects = load("webhooks.yaml");
    var mutating = (MutatingWebhookConfiguration) objects.get(0);
    var validating = (ValidatingWebhookConfiguration) objects.get(1);

    assertThat(mutating.getWebhooks())
        .extracting(w -> w.getName() + " " + w.getFailurePolicy() + " " + w.getClientConfig().getService().getPath())
        .containsExactly("gpu-pods.mutate.gpu-admission.io Fail /mutate", "other-pods.mutate.gpu-admission.io Ignore /mutate");
    assertThat(mutating.getWebhooks()).allSatisfy(w -> {
      assertThat(w.getSideEffects()).isEqualTo("None");
      assertThat(w.getAdmissionReviewVersions()).containsExactly("v1");
      assertThat(w.getReinvocationPolicy()).isEqualTo("IfNeeded");
      assertThat(w.getTimeoutSeconds()).isLessThanOrEqualTo(5);
      assertThat(w.getNamespaceSelector().getMatchExpressions().get(0).getValues()).contains("kube-system", "gpu-admission");
    });
    assertThat(validating.getWebhooks())
        .extracting(w -> w.getName() + " " + w.getFailurePolicy() + " " + w.getClientConfig().getService().getPath())
        .containsExactly(
            "pods.validate.gpu-admission.io Fail /validate",
            "workloads.validate.gpu-admission.io Ignore /validate",
            "policy.validate.gpu-admission.io Ignore /validate");
    assertThat(validating.getWebhooks()).allSatisfy(w -> assertThat(w.getSideEffects()).isEqualTo("None"));
  }

  @Test
  void localVariantCallsTheWebhookOnLoopbackWithTheSamePaths() throws IOException {
    var local = (MutatingWebhookConfiguration) load("webhooks-local.yaml").get(0);
    var validating = (ValidatingWebhookConfiguration) load("webhooks-local.yaml").get(1);

    assertThat(local.getWebhooks()).extracting(w -> w.getClientConfig().getUrl())
        .containsExactly("https://127.0.0.1:8443/mutate", "https://127.0.0.1:8443/mutate");
    assertThat(validating.getWebhooks()).extracting(w -> w.getClientConfig().getUrl())
        .containsOnly("https://127.0.0.1:8443/validate");
  }

  @Test
  void deploymentRunsTwoHardenedReplicasWithProbesOnTheTlsPort() throws IOException {
    var objects = load("deployment.yaml");
    var deployment = (Deployment) objects.get(0);
    var container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);

    assertThat(objects).extracting(HasMetadata::getKind).containsExactly("Deployment", "PodDisruptionBudget", "Service");
    assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
    assertThat(deployment.getSpec().getTemplate().getSpec().getAffinity().getPodAntiAffinity()).isNotNull();
    assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
    assertThat(deployment.getSpec().getTemplate().getSpec().getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(container.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/q/health/ready");
    assertThat(container.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/q/health/live");
    assertThat(container.getReadinessProbe().getHttpGet().getScheme()).isEqualTo("HTTPS");
  }

  @Test
  void schedulerReachesTheExtenderOnItsNodePortWithEveryVerbAndTheRbacBindNeeds() throws IOException {
    var config = new com.fasterxml.jackson.dataformat.yaml.YAMLMapper().readTree(Path.of("manifests/scheduler/kube-scheduler-config.yaml").toFile());
    var extender = config.path("extenders").get(0);
    var service = (io.fabric8.kubernetes.api.model.Service) load("extender-service.yaml").get(0);
    var rules =
        load("rbac.yaml").stream()
            .flatMap(o -> o instanceof io.fabric8.kubernetes.api.model.rbac.ClusterRole c ? c.getRules().stream()
                : o instanceof io.fabric8.kubernetes.api.model.rbac.Role r ? r.getRules().stream() : java.util.stream.Stream.empty())
            .map(r -> r.getResources() + " " + r.getVerbs())
            .toList();

    assertThat(config.path("kind").asText()).isEqualTo("KubeSchedulerConfiguration");
    assertThat(extender.path("urlPrefix").asText()).isEqualTo("https://127.0.0.1:" + service.getSpec().getPorts().get(0).getNodePort() + "/extender");
    assertThat(List.of("filterVerb", "prioritizeVerb", "bindVerb")).extracting(k -> extender.path(k).asText()).containsExactly("filter", "prioritize", "bind");
    assertThat(extender.path("nodeCacheCapable").asBoolean()).isTrue();
    assertThat(extender.path("enableHTTPS").asBoolean()).isTrue();
    assertThat(extender.path("managedResources").findValuesAsText("name")).containsExactly("aliyun.com/gpu-mem", "aliyun.com/gpu");
    assertThat(service.getSpec().getType()).isEqualTo("NodePort");
    assertThat(rules).contains("[pods] [patch]", "[bindings, pods/binding] [create]", "[configmaps] [get, list, watch]", "[leases] [get, update, patch]");
    assertThat(Files.readString(Path.of("manifests/kustomization.yaml"))).contains("- extender-service.yaml");
  }

  @Test
  void everyManifestParses() throws IOException {
    for (var file : List.of("namespace.yaml", "rbac.yaml", "policy-configmap.yaml", "cert-manager/certificate.yaml", "webhooks-local.yaml")) {
      assertThat(load(file)).as(file).isNotEmpty();
    }
  }
}
