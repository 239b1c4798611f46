package io.gpuadmission.node;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.cluster.MockApiServer;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What the node agent's tests share: the fabric8 mock API server with an admin client, and the
 * agents a test starts on it, each on an informer client of its own and returned once its pod
 * cache has listed; closing it stops them all, then the server.
 */
final class AgentTestCluster implements AutoCloseable {
  static final Duration WITHIN = Duration.ofSeconds(20);

  final MockApiServer api;
  final KubernetesClient admin;
  private final List<NodeAgent> agents = new ArrayList<>();
  private final List<KubernetesClient> clients = new ArrayList<>();

  private AgentTestCluster(MockApiServer api) {
    this.api = api;
    this.admin = api.admin();
  }

  static AgentTestCluster start() {
    return new AgentTestCluster(MockApiServer.start(5, null));
  }

  /** An agent on its own client, its rounds run by hand; returned once its pod cache has listed. */
  NodeAgent agent(PodResourcesClient kubelet, DeviceIndex index, NodeAgent.Settings settings) {
    var client = api.informerClient();
    clients.add(client);
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
    clients.forEach(KubernetesClient::close);
    admin.close();
    api.close();
  }
}
