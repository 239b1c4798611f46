package io.gpuadmission.node;

import static io.gpuadmission.node.FakeKubelet.container;
import static io.gpuadmission.node.FakeKubelet.devices;
import static io.gpuadmission.node.FakeKubelet.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.cluster.LedgerWatcher;
import io.gpuadmission.node.AllocationRecorder.Outcome;
import io.gpuadmission.placement.ChoiceOverrides;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.testing.Fixtures;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The two programs through the annotation between them: the node agent (the node-agent module's,
 * against its tests' fake kubelet and mock API server) records the GPUs the kubelet gave, and the
 * server's ledger moves the pod's claim to them and counts the override. (The agent's own behaviour
 * is node-agent/'s NodeAgentTest.)
 */
class NodeAgentLedgerTest {
  private static final String NODE = NodeAgentTest.NODE;
  private static final Duration WITHIN = AgentTestCluster.WITHIN;
  private static final String[] GPU = NodeAgentTest.GPU;
  /** The agent's fixtures, from the repository's root, where the server's tests run. */
  private static final Path FIXTURES = Path.of("node-agent/src/test/resources/node");

  @TempDir Path dir;
  AgentTestCluster cluster;
  KubernetesClient admin;
  FakeKubelet kubelet;
  PodResourcesClient podResources;

  @BeforeEach
  void cluster() {
    cluster = AgentTestCluster.start();
    admin = cluster.admin;
    kubelet = FakeKubelet.start(dir);
    kubelet.allocatable(devices("nvidia.com/gpu", GPU));
    podResources = new PodResourcesClient(kubelet.socket(), Duration.ofSeconds(2));
  }

  @AfterEach
  void stop() {
    cluster.close();
    podResources.close();
    kubelet.close();
  }

  NodeAgent agent() {
    return cluster.agent(podResources, DeviceIndex.fromDriver(FIXTURES.resolve("nvidia-gpus"), Clock.systemUTC()),
        new NodeAgent.Settings(NODE, Set.of("nvidia.com/gpu", "aliyun.com/gpu"), Duration.ofSeconds(5)));
  }

  Pod create(String fixture) {
    return admin.resource(Fixtures.pod(FIXTURES.resolve(fixture))).create();
  }

  String allocated(Pod pod) {
    return cluster.annotation(pod, NodeAgentTest.ALLOCATED);
  }

  void settle(NodeAgent agent) {
    await().atMost(WITHIN).until(() -> {
      var round = agent.round();
      return round.kubeletAnswered() && round.outcomes().keySet().stream().allMatch(o -> o == Outcome.UNCHANGED);
    });
  }

  @Test
  void aNodeThatGaveOtherGpusMovesTheLedgerAndTellsThePodOnce() throws Exception {
    var counted = new ConcurrentHashMap<String, Integer>();
    var overrides = new ChoiceOverrides(node -> counted.merge(node, 1, Integer::sum));
    var ledger = new GpuLedger();
    try (var serverClient = cluster.api.informerClient();
        var watcher = new LedgerWatcher(serverClient, ledger, PolicyParser::builtInDefault).alsoTell(overrides::observe, overrides::gone).start()) {
      var pod = create("pod-bert-worker-0.yaml");
      var uid = pod.getMetadata().getUid();
      await().atMost(WITHIN).until(() -> ledger.claim(uid).isPresent());
      assertThat(ledger.claim(uid).get().gpus()).containsExactly(0, 3);
      kubelet.answer(pod("ml-team-a", "bert-worker-0", container("pytorch", devices("aliyun.com/gpu", GPU[2], GPU[1]))));
      var agent = agent();

      agent.round();
      settle(agent);

      assertThat(allocated(pod)).isEqualTo("1,2");
      await().atMost(WITHIN).untilAsserted(() -> assertThat(ledger.claim(uid).get().gpus()).containsExactly(1, 2));
      assertThat(ledger.view(NODE).get().gpus()).extracting(g -> g.used() > 0).containsExactly(false, true, true, false, false, false, false, false);
      assertThat(overrides.list()).containsExactly(new ChoiceOverrides.Override("ml-team-a", "bert-worker-0", NODE, List.of(0, 3), List.of(1, 2)));
      assertThat(counted).isEqualTo(Map.of(NODE, 1));
      // A restarted agent finds the pod recorded: it writes nothing and tells nothing again.
      agent.close();
      settle(agent());
      var events = admin.v1().events().inNamespace("ml-team-a").list().getItems();
      assertThat(events).singleElement().satisfies(event -> {
        assertThat(event.getType()).isEqualTo("Warning");
        assertThat(event.getReason()).isEqualTo("GpuChoiceOverridden");
        assertThat(event.getMessage()).isEqualTo("asked 0,3, the node gave 1,2");
        assertThat(event.getInvolvedObject().getUid()).isEqualTo(uid);
        assertThat(event.getSource().getComponent()).isEqualTo("gpu-admission");
      });
    }
  }

}
