package io.gpuadmission.node;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.testing.MockApiServer;
import io.gpuadmission.node.api.ApiServer;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What the node agent's tests share: the fabric8 mock API server with an admin client, and the
 * agents a test starts on it, each on an API client of its own (through {@link HttpWatchProxy}:
 * the agent watches as kube-apiserver serves watches) and returned once its pod cache has listed;
 * closing it stops them all, then the server.
 */
final class AgentTestCluster implements AutoCloseable {
  static final Duration WITHIN = Duration.ofSeconds(20);

  final MockApiServer api;
  final KubernetesClient admin;
  private final List<NodeAgent> agents = new ArrayList<>();
  private final List<ApiServer> clients = new ArrayList<>();
  private final HttpWatchProxy proxy;

  private AgentTestCluster(MockApiServer api) {
    this.api = api;
    this.admin = api.admin();
    this.proxy = HttpWatchProxy.start(admin.getMasterUrl().toString());
  }

  /** A client of the agent's own kind, as a DaemonSet pod without a service account token would have. */
  ApiServer client() {
    var client = ApiServer.at(proxy.url(), Path.of("no-service-account"), false, Duration.ofSeconds(5));
    clients.add(client);
    return client;
  }

  static AgentTestCluster start() {
    return new AgentTestCluster(MockApiServer.start(5, null));
  }

  /** An agent on its own client, its rounds run by hand; returned once its pod cache has listed. */
  NodeAgent agent(PodResourcesClient kubelet, DeviceIndex index, NodeAgent.Settings settings) {
    var client = client();
    var agent = NodeAgent.create(client, kubelet, index, settings, Clock.systemUTC());
    agents.add(agent);
    await().atMost(WITHIN).until(agent::podsSynced);
    return agent;
  }

  /** The pod's annotation {@code key} as the API server has it now (null when absent). */
  String annotation(Pod pod, String key) {
    var now = admin.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName()).get();
    return now.getMetadata().getAnnotations() == null ? null : now.getMetadata().getAnnotations().get(key);
  }

  @Override
  public void close() {
    agents.forEach(NodeAgent::close);
    clients.forEach(ApiServer::close);
    proxy.close();
    admin.close();
    api.close();
  }
}
