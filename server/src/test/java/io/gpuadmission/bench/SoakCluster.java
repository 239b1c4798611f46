package io.gpuadmission.bench;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.support.Fixtures;
import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Random;

/**
 * A mock cluster (fabric8 mock API server, CRUD mode) that keeps changing while the soak runs:
 * gang pods come and go, node labels flip, the policy ConfigMap is replaced now and then.
 */
final class SoakCluster implements AutoCloseable {
  private static final List<String> POLICIES =
      List.of("gpuModel:\n  namespaceDefaults:\n    ml-team-a: Tesla-M40\n",
          "gpuModel:\n  namespaceDefaults:\n    ml-team-a: Tesla-V100-SXM2-16GB\n");
  /** Held so that the level set on it sticks: the mock logs every request at INFO. */
  private static final java.util.logging.Logger MOCK_LOG = java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");
  private final KubernetesMockServer server =
      new KubernetesMockServer(new io.fabric8.mockwebserver.Context(), new io.fabric8.mockwebserver.MockWebServer(),
          new java.util.HashMap<>(), new io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher(List.of()), false);
  private final KubernetesClient client;
  private final Random random = new Random(7);
  private final ArrayDeque<String> pods = new ArrayDeque<>();
  private final List<Node> nodes;
  private final Pod gangPod;
  private long changes;

  SoakCluster() {
    MOCK_LOG.setLevel(java.util.logging.Level.WARNING);
    server.init(InetAddress.getLoopbackAddress(), 0);
    client = server.createClient();
    var nodeList = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("cluster/nodes.yaml")), KubernetesList.class);
    nodes = nodeList.getItems().stream().map(Node.class::cast).toList();
    nodes.forEach(node -> client.resource(node).create());
    var namespaces = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("cluster/namespaces.yaml")), KubernetesList.class);
    for (HasMetadata namespace : namespaces.getItems()) {
      client.resource(namespace).create();
    }
    gangPod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("cluster/gang-master.yaml")), Pod.class);
    policy(0);
  }

  String url() {
    return "http://127.0.0.1:" + server.getPort();
  }

  long changes() {
    return changes;
  }

  /** One change: mostly pods created and deleted, sometimes a node relabelled or a new policy. */
  void change() {
    var dice = random.nextInt(100);
    if (dice < 70) {
      var name = "soak-" + changes;
      var pod = new io.fabric8.kubernetes.api.model.PodBuilder(gangPod).editMetadata().withName(name)
          .withResourceVersion(null).addToLabels("gpu-topology", "soak-gang-" + random.nextInt(20)).endMetadata().build();
      client.resource(pod).create();
      pods.add(name);
      if (pods.size() > 200) {
        client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pods.poll()).delete();
      }
    } else if (dice < 98) {
      var node = nodes.get(random.nextInt(nodes.size()));
      client.nodes().withName(node.getMetadata().getName())
          .edit(n -> new io.fabric8.kubernetes.api.model.NodeBuilder(n).editMetadata()
              .addToLabels("soak/heartbeat", Long.toString(changes)).endMetadata().build());
    } else {
      policy(random.nextInt(POLICIES.size()));
    }
    changes++;
  }

  private void policy(int which) {
    client.resource(new ConfigMapBuilder()
        .withNewMetadata().withName("gpu-admission-policy").withNamespace("gpu-admission").endMetadata()
        .addToData("policy.yaml", POLICIES.get(which)).build()).createOr(existing -> existing.update());
  }

  @Override
  public void close() {
    client.close();
    server.destroy();
  }
}
