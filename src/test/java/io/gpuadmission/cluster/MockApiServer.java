package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.support.Fixtures;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.List;

/**
 * A fabric8 mock API server (CRUD mode) that can be stopped and started again on the same port,
 * as an API server that goes away and comes back with its objects (etcd) intact. The mock does
 * not replay missed events to a watch that resumes from a resourceVersion, so tests change
 * objects only once the informers are watching again.
 */
final class MockApiServer implements AutoCloseable {
  private final KubernetesCrudDispatcher store = new KubernetesCrudDispatcher(List.of());
  private int port;
  private KubernetesMockServer server;

  /** Starts with the first {@code nodeCount} fixture nodes, the namespaces and a policy. */
  static MockApiServer start(int nodeCount, String policyYaml) {
    var mock = new MockApiServer();
    mock.server = mock.newServer();
    mock.server.init(InetAddress.getLoopbackAddress(), 0);
    mock.port = mock.server.getPort();
    mock.seed(nodeCount, policyYaml);
    return mock;
  }

  private KubernetesMockServer newServer() {
    return new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), store, false);
  }

  void stop() {
    server.destroy();
    server = null;
  }

  void restart() {
    try {
      // Let the informers notice the outage and back off, as they would in a real one.
      Thread.sleep(1000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    server = newServer();
    server.init(InetAddress.getLoopbackAddress(), port);
  }

  /** A client for changing objects, as a user would with kubectl. */
  KubernetesClient admin() {
    return server.createClient();
  }

  void applyPolicy(String policyYaml) {
    try (var admin = admin()) {
      admin.resource(new ConfigMapBuilder()
          .withNewMetadata().withName("gpu-admission-policy").withNamespace("gpu-admission").endMetadata()
          .addToData("policy.yaml", policyYaml).build()).createOr(existing -> existing.update());
    }
  }

  /** A client for the webhook's informers: fast reconnects, so the test need not wait long. */
  KubernetesClient informerClient() {
    return new KubernetesClientBuilder()
        .withConfig(new ConfigBuilder().withMasterUrl("http://127.0.0.1:" + port).withNamespace("default")
            .withWatchReconnectInterval(100).withWatchReconnectLimit(-1).withRequestTimeout(2000)
            .withConnectionTimeout(1000).withRequestRetryBackoffLimit(0).build())
        .build();
  }

  private void seed(int nodeCount, String policyYaml) {
    try (var admin = server.createClient()) {
      var nodes = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("cluster/nodes.yaml")), KubernetesList.class);
      nodes.getItems().stream().limit(nodeCount).forEach(node -> admin.resource(node).create());
      var namespaces =
          KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("cluster/namespaces.yaml")), KubernetesList.class);
      for (HasMetadata namespace : namespaces.getItems()) {
        admin.resource(namespace).create();
      }
    }
    if (policyYaml != null) {
      applyPolicy(policyYaml);
    }
  }

  @Override
  public void close() {
    if (server != null) {
      stop();
    }
  }
}
