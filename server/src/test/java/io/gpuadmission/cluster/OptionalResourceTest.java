package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.mode.ServerStartup;
import io.gpuadmission.support.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The ElasticQuotaTree informer on an API server that answers 404 for the resource until its CRD is
 * installed, as kube-apiserver does: the cluster is read without it, the quota store says why there
 * is no tree, the informer starts once the CRD is installed and stops once it is deleted, and the
 * LIST that would 404 is never sent.
 */
class OptionalResourceTest {
  private static final Duration RECHECK = Duration.ofMillis(200);
  private static final String NOT_SERVED = "the cluster does not serve ElasticQuotaTree (scheduling.sigs.k8s.io/v1beta1, resource"
      + " elasticquotatrees): no CRD elasticquotatrees.scheduling.sigs.k8s.io; checked again every 200 ms, and used without a restart"
      + " once it is installed";

  private final List<CrdServingApiServer> handle = new ArrayList<>();
  private KubernetesMockServer server;
  private KubernetesClient client;
  private QuotaTreeStore store;
  private QuotaTreeWatcher watcher;

  @BeforeEach
  void startWithoutTheCrd() {
    server = CrdServingApiServer.start("scheduling.sigs.k8s.io/v1beta1", handle);
    client = server.createClient();
    store = new QuotaTreeStore();
    watcher = new QuotaTreeWatcher(new ClusterConnection(client, Optional.of(true), Optional.empty()), store, RECHECK);
  }

  @AfterEach
  void stop() {
    watcher.stop(null);
    client.close();
    server.destroy();
  }

  @Test
  void withoutTheCrdTheClusterIsReadAndQuotasAreOffWithTheReasonThenOnOnceItIsInstalledAndOffOnceItIsDeleted() throws Exception {
    var apiServer = handle.get(0);
    watcher.start(new ServerStartup());

    await().atMost(Duration.ofSeconds(10)).until(() -> !store.notServed().isEmpty());
    assertThat(store.notServed()).isEqualTo(NOT_SERVED);
    assertThat(OptionalResource.undecided()).isEmpty(); // readiness waits no more
    assertThat(store.tree()).isEmpty();
    // Only discovery was asked, never a LIST of trees (kube-apiserver would answer it 404 for ever).
    assertThat(apiServer.refused()).isNotEmpty().allMatch(r -> r.equals("GET /apis/scheduling.sigs.k8s.io/v1beta1"));

    install();
    client.genericKubernetesResources(QuotaTreeWatcher.TREES).inNamespace("kube-system").resource(tree()).create();

    await().atMost(Duration.ofSeconds(10)).until(() -> store.tree().isPresent());
    assertThat(store.notServed()).isEmpty();
    assertThat(store.source()).isEqualTo("kube-system/quotas");

    // kubectl delete of the CRD: its trees go first, then the resource is not served. The informer
    // stops and quotas are off with the same reason.
    client.genericKubernetesResources(QuotaTreeWatcher.TREES).inNamespace("kube-system").withName("quotas").delete();
    client.apiextensions().v1().customResourceDefinitions().withName("elasticquotatrees.scheduling.sigs.k8s.io").delete();
    apiServer.uninstall();

    await().atMost(Duration.ofSeconds(10)).until(() -> store.notServed().equals(NOT_SERVED));
    assertThat(store.tree()).isEmpty();

    install();
    await().atMost(Duration.ofSeconds(10)).until(() -> store.notServed().isEmpty());
    assertThat(store.tree()).isEmpty();
  }

  @Test
  void a404AnywhereInTheInformersFailureMeansTheResourceWent() {
    var gone = new io.fabric8.kubernetes.client.KubernetesClientException("the server could not find the requested resource", 404, null);
    assertThat(OptionalResource.notFound(gone)).isTrue();
    assertThat(OptionalResource.notFound(new java.util.concurrent.CompletionException(gone))).isTrue();
    assertThat(OptionalResource.notFound(new io.fabric8.kubernetes.client.KubernetesClientException("forbidden", 403, null))).isFalse();
    assertThat(OptionalResource.notFound(new java.io.IOException("connection refused"))).isFalse();
  }

  private void install() throws Exception {
    try (var crd = Files.newInputStream(Path.of("manifests/crds/elasticquotatrees.yaml"))) {
      client.apiextensions().v1().customResourceDefinitions().load(crd).create();
    }
    handle.get(0).install();
  }

  private static GenericKubernetesResource tree() {
    return KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("quota/tree.yaml")), GenericKubernetesResource.class);
  }
}
