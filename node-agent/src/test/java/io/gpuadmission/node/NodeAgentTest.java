package io.gpuadmission.node;

import static io.gpuadmission.node.FakeKubelet.container;
import static io.gpuadmission.node.FakeKubelet.devices;
import static io.gpuadmission.node.FakeKubelet.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.mockwebserver.http.MockResponse;
import io.gpuadmission.testing.MockApiServer;
import io.gpuadmission.node.AllocationRecorder.Outcome;
import io.gpuadmission.testing.Fixtures;
import io.gpuadmission.testing.LogCapture;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node agent against a fake kubelet (grpc-java's server on a Unix socket in a temporary
 * directory) and the fabric8 mock API server, round by round: the exact annotation each pod gets,
 * and what a kubelet restart, an API server outage, a pod deleted mid-round, a device without an
 * index and another node's pod do to it.
 */
class NodeAgentTest {
  static final String NODE = "cn-beijing.i-topo-v100-a";
  static final Duration WITHIN = AgentTestCluster.WITHIN;
  // The DGX-1 of node/nvidia-gpus, by index.
  static final String[] GPU = {
    "GPU-1f0c7a34-5b6e-2d8c-9e41-7a3b5c6d8e90",
    "GPU-8d2e4f61-0a3b-4c5d-8e7f-1a2b3c4d5e6f",
    "GPU-c4b5a697-8870-4f61-b2a3-d4c5e6f70819",
    "GPU-27e1d3c5-b7a9-4e8f-9d0c-3b5a7c9e1f20",
    "GPU-5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d",
    "GPU-e0f1a2b3-c4d5-4e6f-9a0b-1c2d3e4f5a6b",
    "GPU-93a4b5c6-d7e8-4f90-a1b2-c3d4e5f6a7b8",
    "GPU-6c7d8e9f-a0b1-4c2d-be3f-4a5b6c7d8e9f"
  };
  static final String ALLOCATED = "gpu-admission.io/gpu-allocated";

  @TempDir Path dir;
  AgentTestCluster cluster;
  MockApiServer api;
  KubernetesClient admin;
  FakeKubelet kubelet;
  PodResourcesClient podResources;

  @BeforeEach
  void cluster() {
    cluster = AgentTestCluster.start();
    api = cluster.api;
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
    return cluster.agent(podResources, DeviceIndex.fromDriver(DeviceIndexTest.DGX1, Clock.systemUTC()),
        new NodeAgent.Settings(NODE, Set.of("nvidia.com/gpu", "aliyun.com/gpu"), Duration.ofSeconds(5)));
  }

  Pod create(String fixture) {
    var pod = Fixtures.pod(Fixtures.path("node/" + fixture));
    return admin.resource(pod).create();
  }

  String allocated(Pod pod) {
    return cluster.annotation(pod, ALLOCATED);
  }

  /** Rounds until the agent's informer shows what it wrote and a round changes nothing. */
  void settle(NodeAgent agent) {
    await().atMost(WITHIN).until(() -> {
      var round = agent.round();
      return round.kubeletAnswered() && round.outcomes().keySet().stream().allMatch(o -> o == Outcome.UNCHANGED);
    });
  }

  @Test
  void recordsTheGpuOfASingleContainerPodOnceAndAgainOnlyWhenItChanges() {
    var pod = create("pod-single.yaml");
    kubelet.answer(pod("ml-team-a", "resnet-eval", container("eval", devices("nvidia.com/gpu", GPU[4]))));
    var agent = agent();

    assertThat(agent.round().outcomes()).isEqualTo(Map.of(Outcome.WRITTEN, 1));
    assertThat(allocated(pod)).isEqualTo("4");
    // Until the informer shows the annotation, a round does not write it again.
    var next = agent.round().outcomes();
    assertThat(next).isIn(Map.of(Outcome.PENDING, 1), Map.of(Outcome.UNCHANGED, 1));
    settle(agent);

    kubelet.answer(pod("ml-team-a", "resnet-eval", container("eval", devices("nvidia.com/gpu", GPU[7]))));
    assertThat(agent.round().outcomes()).isEqualTo(Map.of(Outcome.WRITTEN, 1));
    assertThat(allocated(pod)).isEqualTo("7");
  }

  @Test
  void recordsTheGpusOfEveryContainerOfAPod() {
    var pod = create("pod-multi.yaml");
    kubelet.answer(pod("ml-team-a", "llm-finetune",
        container("trainer", devices("nvidia.com/gpu", GPU[6], GPU[5])),
        container("evaluator", devices("nvidia.com/gpu", GPU[7]))));

    agent().round();

    assertThat(allocated(pod)).isEqualTo("5,6,7");
  }

  @Test
  void countsTheGpusOfRestartableInitContainersAsTheKubeletListsThem() {
    // The kubelet lists the sidecar (restartPolicy Always) and the regular container, never the
    // plain init container: the GPU it used is the one its pod's containers reused, or was freed.
    var pod = create("pod-init-containers.yaml");
    kubelet.answer(pod("ml-team-b", "video-pipeline",
        container("decoder", devices("nvidia.com/gpu", GPU[2])),
        container("detector", devices("nvidia.com/gpu", GPU[1]))));

    agent().round();

    assertThat(allocated(pod)).isEqualTo("1,2");
  }

  @Test
  void aPodTheNodeGaveWhatWasAskedGetsNoEvent() {
    create("pod-single.yaml");
    kubelet.answer(pod("ml-team-a", "resnet-eval", container("eval", devices("nvidia.com/gpu", GPU[4]))));
    settle(agent());

    assertThat(admin.v1().events().inAnyNamespace().list().getItems()).isEmpty();
  }

  @Test
  void survivesAKubeletRestartSayingOnceThatItIsGone() {
    var single = create("pod-single.yaml");
    var multi = create("pod-multi.yaml");
    kubelet.answer(pod("ml-team-a", "resnet-eval", container("eval", devices("nvidia.com/gpu", GPU[4]))));
    var agent = agent();
    agent.round();
    assertThat(allocated(single)).isEqualTo("4");

    try (var log = LogCapture.of(NodeAgent.class, true)) {
      kubelet.stop();
      assertThat(kubelet.socket()).doesNotExist();
      assertThat(agent.round().kubeletAnswered()).isFalse();
      assertThat(agent.round().kubeletAnswered()).isFalse();
      kubelet.answer(
          pod("ml-team-a", "resnet-eval", container("eval", devices("nvidia.com/gpu", GPU[4]))),
          pod("ml-team-a", "llm-finetune", container("trainer", devices("nvidia.com/gpu", GPU[5], GPU[6])),
              container("evaluator", devices("nvidia.com/gpu", GPU[7]))));
      kubelet.start();

      // The first round after the restart connects again and answers.
      var round = agent.round();
      assertThat(round.kubeletAnswered()).isTrue();
      assertThat(round.outcomes()).containsEntry(Outcome.WRITTEN, 1);
      assertThat(allocated(multi)).isEqualTo("5,6,7");
      assertThat(log.records()).extracting(LogCapture::text).containsExactly(
          "the kubelet's PodResources API at " + kubelet.socket() + " does not answer (no socket: the kubelet is restarting, or its pod-resources directory is not mounted); asking again every 5s",
          "the kubelet's PodResources API answers again",
          "the kubelet allocates whole GPUs 0,1,2,3,4,5,6,7 of aliyun.com/gpu, nvidia.com/gpu");
    }
  }

  @Test
  void recordsNoPodHoldingADeviceWithoutAnIndexAndSaysSoOnce() {
    var pod = create("pod-mig.yaml");
    var mig = "MIG-4d5e6f70-8192-5a3b-9c4d-5e6f7a8b9c0d";
    var unknown = "GPU-00000000-0000-0000-0000-00000000dead";
    // The MIG slice is among the devices the kubelet allocates from: said before any pod holds it.
    kubelet.allocatable(devices("nvidia.com/gpu", GPU[3], mig));
    kubelet.answer(pod("ml-team-b", "notebook-mig", container("jupyter", devices("nvidia.com/gpu", GPU[3], mig, unknown))));
    var agent = agent();

    try (var log = LogCapture.of(NodeAgent.class, true)) {
      agent.round();
      settle(agent);

      // It holds three devices; "3" alone would free the other two in the ledger.
      assertThat(allocated(pod)).isNull();
      assertThat(log.records()).extracting(LogCapture::text).containsExactly(
          "the kubelet allocates device " + mig + ", which has no GPU index: not a GPU UUID the NVIDIA driver lists, nor an index;"
              + " pods given it will not have it recorded (said once)",
          "the kubelet allocates whole GPUs 3 of aliyun.com/gpu, nvidia.com/gpu",
          "device " + unknown + " (pod ml-team-b/notebook-mig) has no GPU index: not a GPU UUID the NVIDIA driver lists, nor an"
              + " index; the pod's GPUs are not recorded (said once)");
    }
  }

  @Test
  void aPodDeletedBetweenTheKubeletsListAndThePatchIsSkippedAndTheOthersRecorded() {
    var single = create("pod-single.yaml");
    var multi = create("pod-multi.yaml");
    kubelet.answer(
        pod("ml-team-a", "resnet-eval", container("eval", devices("nvidia.com/gpu", GPU[4]))),
        pod("ml-team-a", "llm-finetune", container("trainer", devices("nvidia.com/gpu", GPU[5], GPU[6]))));
    var agent = agent();
    // The agent's informer still shows resnet-eval; the API server has deleted it.
    admin.resource(single).delete();
    api.answerInstead(request -> request.getMethod().equals("PATCH") && request.getPath().endsWith("/pods/resnet-eval")
        ? new MockResponse().setResponseCode(404).setBody(
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404,"
                + "\"message\":\"pods \\\"resnet-eval\\\" not found\"}")
        : null);

    var round = agent.round();

    assertThat(round.outcomes()).containsEntry(Outcome.WRITTEN, 1);
    assertThat(round.outcomes().getOrDefault(Outcome.FAILED, 0)).isZero();
    assertThat(allocated(multi)).isEqualTo("5,6");
  }

  @Test
  void anApiServerOutageDelaysTheRecordsAndLosesNone() {
    var single = create("pod-single.yaml");
    var multi = create("pod-multi.yaml");
    kubelet.answer(
        pod("ml-team-a", "resnet-eval", container("eval", devices("nvidia.com/gpu", GPU[4]))),
        pod("ml-team-a", "llm-finetune", container("trainer", devices("nvidia.com/gpu", GPU[5], GPU[6]))));
    var agent = agent();

    try (var log = LogCapture.of(NodeAgent.class, true)) {
      api.stop();
      assertThat(agent.round().outcomes()).isEqualTo(Map.of(Outcome.FAILED, 2));
      assertThat(agent.round().outcomes()).isEqualTo(Map.of(Outcome.FAILED, 2));
      api.restart();
      await().atMost(WITHIN).until(() -> agent.round().outcomes().equals(Map.of(Outcome.WRITTEN, 2)));

      assertThat(allocated(single)).isEqualTo("4");
      assertThat(allocated(multi)).isEqualTo("5,6");
      assertThat(log.records()).extracting(LogCapture::text).hasSize(3).satisfies(lines -> {
        assertThat(lines.get(0)).isEqualTo("the kubelet allocates whole GPUs 0,1,2,3,4,5,6,7 of aliyun.com/gpu, nvidia.com/gpu");
        assertThat(lines.get(1)).startsWith("cannot record the GPUs of 2 pods: ").endsWith("; trying again every 5s");
        assertThat(lines.get(2)).isEqualTo("recording the pods' GPUs again");
      });
    }
  }

  @Test
  void isLiveWhileRoundsRunAndReadyFromTheFirstAnswerOfTheKubelet() {
    create("pod-single.yaml");
    kubelet.answer(pod("ml-team-a", "resnet-eval", container("eval", devices("nvidia.com/gpu", GPU[4]))));
    var agent = agent();
    var now = new java.util.concurrent.atomic.AtomicReference<>(java.time.Instant.now());
    var clock = new Clock() {
      @Override
      public java.time.Instant instant() {
        return now.get();
      }

      @Override
      public java.time.ZoneId getZone() {
        return java.time.ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(java.time.ZoneId zone) {
        return this;
      }
    };
    var health = new NodeAgentHealth(agent, Duration.ofSeconds(5), Duration.ofSeconds(3), clock);

    assertThat(health.ready()).isEqualTo(new NodeAgentHealth.Answer(503,
        "{\"status\":\"DOWN\",\"checks\":[{\"name\":\"node-agent\",\"status\":\"DOWN\",\"data\":{\"kubeletAnswered\":false,\"podsListed\":true}}]}"));
    assertThat(health.live().status()).isEqualTo(200);
    kubelet.stop();
    agent.round();
    assertThat(health.ready().status()).isEqualTo(503);
    kubelet.start();
    // Ready from the first round the kubelet answers, which need not be the first round after its
    // start: gRPC may still be finishing a reconnect attempt to the socket the stopped kubelet left
    // (seen under load). The agent's rounds repeat; so does this one, until an answer.
    await().atMost(Duration.ofSeconds(20)).until(() -> agent.round().kubeletAnswered());
    assertThat(health.ready().status()).isEqualTo(200);
    // A kubelet restart later does not make it unready; a round thread stuck for a minute makes it dead.
    kubelet.stop();
    var last = agent.round().at();
    now.set(last.plusSeconds(30));
    assertThat(health.ready().status()).isEqualTo(200);
    assertThat(health.live().status()).isEqualTo(200);
    now.set(last.plusSeconds(60));
    assertThat(health.live()).isEqualTo(new NodeAgentHealth.Answer(503,
        "{\"status\":\"DOWN\",\"checks\":[{\"name\":\"node-agent\",\"status\":\"DOWN\",\"data\":{\"secondsSinceLastRound\":60}}]}"));
    assertThat(health.started().status()).isEqualTo(200);
  }

  @Test
  void neverWritesAPodOfAnotherNode() {
    var elsewhere = create("pod-other-node.yaml");
    var mine = create("pod-single.yaml");
    // Whatever the socket answers, only pods the API server shows on this node are written.
    kubelet.answer(
        pod("ml-team-a", "elsewhere", container("main", devices("nvidia.com/gpu", GPU[1]))),
        pod("ml-team-a", "resnet-eval", container("eval", devices("nvidia.com/gpu", GPU[4]))));

    var round = agent().round();

    assertThat(round.outcomes()).isEqualTo(Map.of(Outcome.WRITTEN, 1));
    assertThat(allocated(mine)).isEqualTo("4");
    assertThat(allocated(elsewhere)).isNull();
  }
}
