package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.gpuadmission.mode.ServerStartup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The webhook configurations as shipped get the release namespace as their owner, so that the
 * garbage collector deletes them with the namespace; any other owner stays, and a configuration
 * that calls another namespace's Service is not this install's and is left alone.
 */
class WebhookOwnershipTest {
  private KubernetesMockServer server;
  private KubernetesClient client;
  private NamespaceInventory namespaces;
  private WebhookOwnership ownership;
  private String uid;

  @BeforeEach
  void cluster() throws Exception {
    var responses = new java.util.HashMap<io.fabric8.mockwebserver.ServerRequest, java.util.Queue<io.fabric8.mockwebserver.ServerResponse>>();
    server = new KubernetesMockServer(new io.fabric8.mockwebserver.Context(), new io.fabric8.mockwebserver.MockWebServer(), responses,
        new io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher(responses), false);
    server.init();
    client = server.createClient();
    uid = client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("gpu-admission").endMetadata().build()).create()
        .getMetadata().getUid();
    try (var shipped = Files.newInputStream(Path.of("manifests/base/webhooks.yaml"))) {
      client.load(shipped).items().forEach(item -> client.resource(item).create());
    }
    var connection = new ClusterConnection(client, Optional.of(true), Optional.empty());
    namespaces = new NamespaceInventory(connection);
    namespaces.start(new ServerStartup());
    await().atMost(Duration.ofSeconds(10)).until(namespaces::synced);
    ownership = new WebhookOwnership(connection, new WebhookNamespace(Webhook.POLICY_CONFIG), namespaces, "gpu-admission", Duration.ofMinutes(5));
  }

  @AfterEach
  void stop() {
    namespaces.stop(null);
    client.close();
    server.destroy();
  }

  @Test
  void bothShippedConfigurationsAreOwnedByTheReleaseNamespaceBesideAnyOtherOwner() {
    var other = new OwnerReferenceBuilder().withApiVersion("v1").withKind("ConfigMap").withName("keeper").withUid("u-keeper").build();
    var validating = client.admissionRegistration().v1().validatingWebhookConfigurations().withName("gpu-admission");
    validating.edit(v -> {
      v.getMetadata().setOwnerReferences(List.of(other));
      return v;
    });

    assertThat(ownership.sync()).isTrue();
    assertThat(ownership.sync()).isTrue(); // once only

    assertThat(mutating().getMetadata().getOwnerReferences()).containsExactly(namespaceOwner());
    assertThat(validating.get().getMetadata().getOwnerReferences()).containsExactly(other, namespaceOwner());
  }

  @Test
  void aConfigurationThatCallsAnotherNamespacesServiceIsNotThisInstallsAndIsLeftAlone() {
    client.admissionRegistration().v1().mutatingWebhookConfigurations().withName("gpu-admission").edit(m -> {
      m.getWebhooks().get(1).getClientConfig().getService().setNamespace("another-install");
      return m;
    });

    ownership.sync();

    assertThat(mutating().getMetadata().getOwnerReferences()).isNullOrEmpty();
    assertThat(client.admissionRegistration().v1().validatingWebhookConfigurations().withName("gpu-admission").get().getMetadata()
        .getOwnerReferences()).containsExactly(namespaceOwner());
    assertThat(WebhookOwnership.callsOnly(new ValidatingWebhookConfiguration(), "gpu-admission")).isFalse();
  }

  @Test
  void aNamespaceTheInformerDoesNotShowYetIsTriedAgainSoonNotAtTheNextResync() {
    var connection = new ClusterConnection(client, Optional.of(true), Optional.empty());
    var notListed = new NamespaceInventory(connection); // its informer not started: it knows no namespace yet
    var early = new WebhookOwnership(connection, new WebhookNamespace(Webhook.POLICY_CONFIG), notListed, "gpu-admission", Duration.ofMinutes(5));

    assertThat(early.sync()).isFalse();
    assertThat(mutating().getMetadata().getOwnerReferences()).isNullOrEmpty();
  }

  private MutatingWebhookConfiguration mutating() {
    return client.admissionRegistration().v1().mutatingWebhookConfigurations().withName("gpu-admission").get();
  }

  private OwnerReference namespaceOwner() {
    return new OwnerReferenceBuilder().withApiVersion("v1").withKind("Namespace").withName("gpu-admission").withUid(uid).build();
  }
}
