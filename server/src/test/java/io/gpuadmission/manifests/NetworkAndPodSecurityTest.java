package io.gpuadmission.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.gpuadmission.support.Fixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Least exposure: who may reach the webhook, and the Pod Security level it runs under. */
class NetworkAndPodSecurityTest {
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  @SuppressWarnings("unchecked")
  private static <T> T first(String file, Class<T> kind) throws IOException {
    var parsed = SERIALIZATION.unmarshal(Files.readString(Path.of("manifests", file)));
    var objects = parsed instanceof List<?> list ? (List<HasMetadata>) list : List.of((HasMetadata) parsed);
    return objects.stream().filter(kind::isInstance).map(kind::cast).findFirst().orElseThrow();
  }

  @Test
  void onlyTheApiServerAndTheSchedulerReachTheWebhookPort() throws IOException {
    var policy = first("components/network-policy/networkpolicy.yaml", NetworkPolicy.class);
    var deployment = first("base/deployment.yaml", Deployment.class);
    var container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);

    assertThat(Files.readAllLines(Path.of("manifests/components/network-policy/kustomization.yaml"))).contains("- networkpolicy.yaml");
    assertThat(policy.getMetadata().getNamespace()).isEqualTo(deployment.getMetadata().getNamespace());
    assertThat(deployment.getSpec().getTemplate().getMetadata().getLabels())
        .containsAllEntriesOf(policy.getSpec().getPodSelector().getMatchLabels());
    assertThat(policy.getSpec().getPolicyTypes()).containsExactly("Ingress");
    assertThat(policy.getSpec().getIngress()).singleElement().satisfies(rule -> {
      assertThat(rule.getPorts()).extracting(p -> p.getPort().getStrVal() + "/" + p.getProtocol()).containsExactly("https/TCP");
      assertThat(container.getPorts()).extracting(p -> p.getName() + " " + p.getContainerPort()).containsExactly("https 8443");
      assertThat(rule.getFrom()).hasSize(3);
      assertThat(rule.getFrom().get(0).getIpBlock().getCidr()).isEqualTo("API_SERVER_CIDR");
      assertThat(rule.getFrom().get(1).getNamespaceSelector().getMatchLabels())
          .containsExactlyEntriesOf(java.util.Map.of("kubernetes.io/metadata.name", "kube-system"));
      assertThat(rule.getFrom().get(1).getPodSelector().getMatchLabels())
          .containsExactlyEntriesOf(java.util.Map.of("component", "kube-scheduler"));
      assertThat(rule.getFrom().get(2).getPodSelector().getMatchLabels())
          .containsExactlyEntriesOf(java.util.Map.of("app.kubernetes.io/name", "gpu-scheduler"));
    });
  }

  @Test
  void webhookPodPassesPodSecurityRestrictedInANamespaceThatEnforcesIt() throws IOException {
    var namespace = first("base/namespace.yaml", Namespace.class);
    var deployment = first("base/deployment.yaml", Deployment.class);

    assertThat(namespace.getMetadata().getLabels()).containsEntry("pod-security.kubernetes.io/enforce", "restricted");
    assertThat(deployment.getMetadata().getNamespace()).isEqualTo(namespace.getMetadata().getName());
    assertThat(RestrictedProfile.violations(deployment.getSpec().getTemplate().getSpec())).isEmpty();
  }

  @Test
  void restrictedCheckNamesEveryBreachOfACopiedPod() {
    var pod = SERIALIZATION.unmarshal(Fixtures.text(Fixtures.path("manifests/pod-not-restricted.yaml")), Pod.class);

    assertThat(RestrictedProfile.violations(pod.getSpec())).containsExactly(
        "spec.host{Network,PID,IPC}: host namespaces",
        "spec.volumes[logs].hostPath",
        "spec.volumes[logs]: type not allowed by restricted",
        "spec.securityContext.runAsUser: 0",
        "containers[app].ports.hostPort",
        "containers[app].securityContext.allowPrivilegeEscalation must be false",
        "containers[app].securityContext.runAsNonRoot must be true (here or for the pod)",
        "containers[app].securityContext.seccompProfile must be RuntimeDefault or Localhost (here or for the pod)",
        "containers[app].securityContext.capabilities.drop must include ALL",
        "containers[app].securityContext.capabilities.add[NET_ADMIN]",
        "containers[app].securityContext.capabilities.add[CHOWN] (baseline only)");
  }

  /** The chart: the same policy with the API server's CIDRs from the values, the same hardened pod. */
  @Test
  void chartsNetworkPolicyNamesTheGivenApiServerAddressesAndItsPodPassesRestricted() throws Exception {
    var objects = Overlays.objects(Chart.template(java.util.List.of("namespace.create=true", "networkPolicy.enabled=true", "networkPolicy.apiServerCIDRs={10.0.0.5/32,192.168.1.0/24}")));
    var policy = (NetworkPolicy) RenderedObjects.find(objects, "NetworkPolicy", "gpu-admission", "gpu-admission");
    assertThat(policy.getSpec().getIngress()).singleElement().satisfies(rule -> {
      assertThat(rule.getFrom()).extracting(f -> f.getIpBlock() == null ? "selector" : f.getIpBlock().getCidr())
          .containsExactly("10.0.0.5/32", "192.168.1.0/24", "selector", "selector");
      assertThat(rule.getPorts()).extracting(p -> p.getPort().getStrVal() + "/" + p.getProtocol()).containsExactly("https/TCP");
    });
    var namespace = (Namespace) RenderedObjects.find(objects, "Namespace", null, "gpu-admission");
    assertThat(namespace.getMetadata().getLabels()).containsEntry("pod-security.kubernetes.io/enforce", "restricted");
    assertThat(RestrictedProfile.violations(RenderedObjects.deployment(objects, "gpu-admission").getSpec().getTemplate().getSpec())).isEmpty();
  }

  @Test
  void chartRefusesTheNetworkPolicyWithoutTheApiServersAddresses() throws Exception {
    var result = Chart.templateResult(java.util.List.of("networkPolicy.enabled=true"));
    assertThat(result.exit()).isNotZero();
    assertThat(result.error()).contains("networkPolicy.apiServerCIDRs: with networkPolicy.enabled, give the API server's addresses as CIDRs");
  }
}
