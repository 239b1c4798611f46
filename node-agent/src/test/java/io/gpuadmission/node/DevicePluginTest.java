package io.gpuadmission.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.allocator.LinkMatrix;
import io.gpuadmission.testing.MockApiServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node agent's device plugin against a fake kubelet that registers, watches and allocates as
 * the v1.32 device manager does ({@link FakeDeviceManager}), its PodResources answer ({@link
 * FakeKubelet}) and the fabric8 mock API server: the exact GPUs each container is handed, and
 * what each pod's record then says.
 */
class DevicePluginTest {
  static final String NODE = NodeAgentTest.NODE;
  static final String[] GPU = NodeAgentTest.GPU;
  static final String RESOURCE = "aliyun.com/gpu";
  static final Duration WITHIN = NodeAgentTest.WITHIN;

  @TempDir Path dir;
  AgentTestCluster cluster;
  MockApiServer api;
  KubernetesClient admin;
  FakeKubelet podResources;
  PodResourcesClient podResourcesClient;
  FakeDeviceManager kubelet;
  Path driver;

  @BeforeEach
  void node() throws IOException {
    cluster = AgentTestCluster.start();
    api = cluster.api;
    admin = cluster.admin;
    Files.createDirectories(dir.resolve("pod-resources"));
    Files.createDirectories(dir.resolve("device-plugins"));
    podResources = FakeKubelet.start(dir.resolve("pod-resources"));
    podResourcesClient = new PodResourcesClient(podResources.socket(), Duration.ofSeconds(2));
    kubelet = new FakeDeviceManager(dir.resolve("device-plugins"), RESOURCE);
    // The driver's table (a copy, so that a GPU can leave it) and sysfs' NUMA nodes: 0-3 on 0, 4-7 on 1.
    driver = dir.resolve("driver");
    Files.createDirectories(driver);
    try (var gpus = Files.list(DeviceIndexTest.DGX1)) {
      for (var gpu : gpus.toList()) {
        var copy = driver.resolve(gpu.getFileName().toString());
        Files.createDirectories(copy);
        Files.copy(gpu.resolve("information"), copy.resolve("information"));
        var numa = dir.resolve("sys").resolve(gpu.getFileName().toString());
        Files.createDirectories(numa);
        Files.writeString(numa.resolve("numa_node"), gpu.getFileName().toString().startsWith("0000:0") ? "0\n" : "1\n");
      }
    }
  }

  @AfterEach
  void stop() {
    cluster.close();
    podResourcesClient.close();
    podResources.close();
    kubelet.close();
  }

  NodeAgent agent() {
    return agent(Duration.ofMillis(200));
  }

  /** {@code cacheLag}: how long the plugin waits for its pod cache when no bound choice fits. */
  NodeAgent agent(Duration cacheLag) {
    var whole = Set.of("nvidia.com/gpu", RESOURCE);
    var plugin = new DevicePlugin.Settings(dir.resolve("device-plugins"), List.of(RESOURCE), DevicePluginServer.Handover.ENV, driver,
        dir.resolve("sys"), Optional.of(LinkMatrix.dgx1V100()), whole, Duration.ofSeconds(3), cacheLag);
    var agent = cluster.agent(podResourcesClient, DeviceIndex.fromDriver(driver, Clock.systemUTC()),
        new NodeAgent.Settings(NODE, whole, Duration.ofSeconds(5), Optional.of(plugin)));
    registered(agent, 1);
    return agent;
  }

  /** Rounds (each registers again if needed) until the kubelet saw {@code times} registrations and lists the GPUs. */
  void registered(NodeAgent agent, int times) {
    await().atMost(Duration.ofSeconds(60)).until(() -> {
      if (kubelet.registrations().size() < times) {
        agent.round();
      }
      return kubelet.registrations().size() == times && kubelet.devices().size() == 8;
    });
  }

  static Container container(String name, int gpus) {
    return new ContainerBuilder().withName(name).withImage("cuda").withNewResources()
        .addToLimits(RESOURCE, new Quantity(Integer.toString(gpus))).endResources().build();
  }

  /** A pod bound to the node; {@code annotations}: bind's, as name/value pairs. */
  Pod bound(String name, List<Container> init, List<Container> containers, String... annotations) {
    var pod = new PodBuilder().withNewMetadata().withNamespace("ml-team-a").withName(name).endMetadata()
        .withNewSpec().withNodeName(NODE).withInitContainers(init).withContainers(containers).endSpec()
        .withNewStatus().withPhase("Pending").endStatus().build();
    var map = new HashMap<String, String>();
    for (int i = 0; i < annotations.length; i += 2) {
      map.put(annotations[i], annotations[i + 1]);
    }
    pod.getMetadata().setAnnotations(map);
    return admin.resource(pod).create();
  }

  void seen(NodeAgent agent, Pod... pods) {
    for (var pod : pods) {
      await().atMost(WITHIN).until(() -> agent.sees(pod.getMetadata().getNamespace(), pod.getMetadata().getName()));
    }
  }

  String visible(Pod pod, String container) {
    return kubelet.response(key(pod), container).getEnvsOrThrow("NVIDIA_VISIBLE_DEVICES");
  }

  static String key(Pod pod) {
    return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
  }

  static String uuids(int... gpus) {
    var out = new ArrayList<String>();
    for (var g : gpus) {
      out.add(GPU[g]);
    }
    return String.join(",", out);
  }

  String annotation(Pod pod, String key) {
    return cluster.annotation(pod, key);
  }

  /** A round with the kubelet's PodResources answer as the device manager now holds it. */
  void record(NodeAgent agent) {
    podResources.answer(kubelet.podResources());
    agent.round();
  }

  @Test
  void registersWithTheKubeletAndListsEveryGpuByUuidWithItsNumaNode() {
    agent();

    assertThat(kubelet.registrations()).containsExactly(RESOURCE + " gpu-admission-aliyun.com-gpu.sock preferred=true");
    assertThat(kubelet.devices()).extracting(d -> d.getID() + " " + d.getHealth() + " numa " + d.getTopology().getNodes(0).getID())
        .containsExactly(GPU[0] + " Healthy numa 0", GPU[1] + " Healthy numa 0", GPU[2] + " Healthy numa 0", GPU[3] + " Healthy numa 0",
            GPU[4] + " Healthy numa 1", GPU[5] + " Healthy numa 1", GPU[6] + " Healthy numa 1", GPU[7] + " Healthy numa 1");
  }

  @Test
  void aTopologyPodBoundToGpus0And3GetsExactlyTheirUuids() {
    var agent = agent();
    var pod = bound("bert-worker-0", List.of(), List.of(container("pytorch", 2)), "gpu-admission.io/gpu-indices", "0,3");
    seen(agent, pod);

    var held = kubelet.admit(pod);

    assertThat(visible(pod, "pytorch")).isEqualTo(uuids(0, 3));
    assertThat(new HashSet<>(held.get("pytorch"))).containsExactlyInAnyOrder(GPU[0], GPU[3]);
    assertThat(kubelet.calls).containsExactly("GetPreferredAllocation pytorch 2", "Allocate pytorch 2");
    await().atMost(WITHIN).until(() -> "true".equals(annotation(pod, "gpu-admission.io/gpu-assigned")));
    record(agent);
    assertThat(annotation(pod, "gpu-admission.io/gpu-allocated")).isEqualTo("0,3");
  }

  @Test
  void twoPodsOfOneSizeBoundAtOnceGetTheirOwnChoicesAndTheirRecordsMatch() {
    var agent = agent();
    var first = bound("worker-0", List.of(), List.of(container("pytorch", 2)), "gpu-admission.io/gpu-indices", "0,3");
    var second = bound("worker-1", List.of(), List.of(container("pytorch", 2)), "gpu-admission.io/gpu-indices", "1,2");
    seen(agent, first, second);

    // The kubelet admits them in the order they arrived.
    kubelet.admit(first);
    kubelet.admit(second);

    assertThat(visible(first, "pytorch")).isEqualTo(uuids(0, 3));
    assertThat(visible(second, "pytorch")).isEqualTo(uuids(1, 2));
    record(agent);
    assertThat(annotation(first, "gpu-admission.io/gpu-allocated")).isEqualTo("0,3");
    assertThat(annotation(second, "gpu-admission.io/gpu-allocated")).isEqualTo("1,2");
  }

  @Test
  void podsAdmittedInAnotherOrderThanTheyArrivedStillGetDisjointGpusAndTruthfulRecords() {
    var agent = agent();
    var first = bound("worker-0", List.of(), List.of(container("pytorch", 2)), "gpu-admission.io/gpu-indices", "0,3");
    var second = bound("worker-1", List.of(), List.of(container("pytorch", 2)), "gpu-admission.io/gpu-indices", "1,2");
    seen(agent, first, second);

    var two = kubelet.admit(second);
    var one = kubelet.admit(first);

    // No call names the pod: the guess follows the arrival order, so the two swap choices, and
    // nothing is given twice.
    assertThat(new HashSet<>(one.get("pytorch"))).doesNotContainAnyElementsOf(two.get("pytorch"));
    record(agent);
    assertThat(annotation(first, "gpu-admission.io/gpu-allocated")).isEqualTo(indices(one.get("pytorch")));
    assertThat(annotation(second, "gpu-admission.io/gpu-allocated")).isEqualTo(indices(two.get("pytorch")));
  }

  static String indices(List<String> uuids) {
    var out = new ArrayList<Integer>();
    for (var id : uuids) {
      out.add(List.of(GPU).indexOf(id));
    }
    return io.gpuadmission.contract.GpuAnnotations.join(out.stream().sorted().toList());
  }

  @Test
  void eachContainerOfATwoContainerPodGetsItsPartOfBindsChoice() {
    var agent = agent();
    var pod = bound("llm-finetune", List.of(), List.of(container("trainer", 2), container("evaluator", 1)),
        "gpu-admission.io/gpu-indices", "5,6,7", "gpu-admission.io/container-gpus", "trainer=5,6;evaluator=7");
    seen(agent, pod);

    kubelet.admit(pod);

    assertThat(visible(pod, "trainer")).isEqualTo(uuids(5, 6));
    assertThat(visible(pod, "evaluator")).isEqualTo(uuids(7));
    record(agent);
    assertThat(annotation(pod, "gpu-admission.io/gpu-allocated")).isEqualTo("5,6,7");
  }

  @Test
  void anInitContainerGetsItsPartAndTheContainerAfterItTheRestWithTheGpuItReuses() {
    var agent = agent();
    // Only bind's indices (no split annotation): the split is derived the same way bind writes it,
    // prep=0 and train=0,3 (the kubelet hands prep's GPU on to train).
    var pod = bound("video-pipeline", List.of(container("prep", 1)), List.of(container("train", 2)),
        "gpu-admission.io/gpu-indices", "0,3");
    seen(agent, pod);

    kubelet.admit(pod);

    assertThat(visible(pod, "prep")).isEqualTo(uuids(0));
    assertThat(visible(pod, "train")).isEqualTo(uuids(0, 3));
    assertThat(kubelet.calls).containsExactly("GetPreferredAllocation prep 1", "Allocate prep 1", "GetPreferredAllocation train 2",
        "Allocate train 2");
    record(agent);
    assertThat(annotation(pod, "gpu-admission.io/gpu-allocated")).isEqualTo("0,3");
  }

  @Test
  void aPodTheKubeletAdmitsBeforeTheAgentsCacheHasItStillGetsBindsChoice() throws Exception {
    // The agent waits for the pod's watch event at most this long; the wait ends when the event
    // comes, so a bound generous for a loaded machine costs nothing when it is quick.
    var agent = agent(Duration.ofSeconds(20));
    // GPUs 2 and 5 are not NVLinked (DGX-1): never the topology-best pair, only bind's choice.
    var pod = new PodBuilder().withNewMetadata().withNamespace("ml-team-a").withName("late-worker")
        .withAnnotations(Map.of("gpu-admission.io/gpu-indices", "2,5")).endMetadata()
        .withNewSpec().withNodeName(NODE).withContainers(container("pytorch", 2)).endSpec()
        .withNewStatus().withPhase("Pending").endStatus().build();
    // The kubelet's watch brought the pod first: it asks while the agent's cache has no such pod.
    var admission = java.util.concurrent.CompletableFuture.supplyAsync(() -> kubelet.admit(pod));
    Thread.sleep(300);
    admin.resource(pod).create();

    admission.get(30, java.util.concurrent.TimeUnit.SECONDS);

    assertThat(visible(pod, "pytorch")).isEqualTo(uuids(2, 5));
  }

  @Test
  void aPodNobodyBoundGetsTheAllocatorsTopologyBestSet() {
    var agent = agent();
    var taken = bound("bert-worker-0", List.of(), List.of(container("pytorch", 2)), "gpu-admission.io/gpu-indices", "0,3");
    seen(agent, taken);
    kubelet.admit(taken);
    var pod = bound("other-scheduler", List.of(), List.of(container("main", 4)));
    seen(agent, pod);

    kubelet.admit(pod);

    // Of GPUs 1,2,4,5,6,7 of the DGX-1 the four best connected: 4-7 (each pair NVLinked).
    assertThat(visible(pod, "main")).isEqualTo(uuids(4, 5, 6, 7));
  }

  /**
   * With the API server away (the agent started during an outage) the device plugin is served all
   * the same: registered, its GPUs listed (the kubelet needs ListAndWatch), and a container it
   * admits gets the topology-best set, since no bound choice can be known.
   */
  @Test
  void theDevicePluginIsServedWhileTheApiServerIsAwayAndPrefersTheTopologyBestSet() throws IOException {
    var free = new java.net.ServerSocket(0);
    var port = free.getLocalPort();
    free.close();
    var away = io.gpuadmission.node.api.ApiServer.at("http://127.0.0.1:" + port, Path.of("no-service-account"), false, Duration.ofSeconds(2));
    var whole = Set.of("nvidia.com/gpu", RESOURCE);
    var plugin = new DevicePlugin.Settings(dir.resolve("device-plugins"), List.of(RESOURCE), DevicePluginServer.Handover.ENV, driver,
        dir.resolve("sys"), Optional.of(LinkMatrix.dgx1V100()), whole, Duration.ofSeconds(3), Duration.ofMillis(200));
    var agent = NodeAgent.create(away, podResourcesClient, DeviceIndex.fromDriver(driver, Clock.systemUTC()),
        new NodeAgent.Settings(NODE, whole, Duration.ofSeconds(5), Optional.of(plugin)), Clock.systemUTC()).start();
    try {
      await().atMost(Duration.ofSeconds(60)).until(() -> kubelet.registrations().size() == 1 && kubelet.devices().size() == 8);
      assertThat(agent.podsSynced()).isFalse();
      var pod = new PodBuilder().withNewMetadata().withNamespace("ml-team-a").withName("admitted-in-the-outage").endMetadata()
          .withNewSpec().withNodeName(NODE).withContainers(container("main", 4)).endSpec().build();

      kubelet.admit(pod);

      var best = BestSet.of(LinkMatrix.dgx1V100(), Set.of(0, 1, 2, 3, 4, 5, 6, 7), Set.of(), 4);
      assertThat(visible(pod, "main")).isEqualTo(uuids(best.stream().mapToInt(Integer::intValue).toArray()));
    } finally {
      agent.close();
      away.close();
    }
  }

  @Test
  void aKubeletRestartIsFollowedByAnotherRegistrationOnANewSocket() {
    var agent = agent();
    var plugin = dir.resolve("device-plugins").resolve("gpu-admission-aliyun.com-gpu.sock");
    assertThat(plugin).exists();

    kubelet.restart(); // empties the directory, as the kubelet's start does; the agent may make its socket again at once

    registered(agent, 2);
    assertThat(plugin).exists();
    var pod = bound("bert-worker-0", List.of(), List.of(container("pytorch", 2)), "gpu-admission.io/gpu-indices", "0,3");
    seen(agent, pod);
    kubelet.admit(pod);
    assertThat(visible(pod, "pytorch")).isEqualTo(uuids(0, 3));
  }

  /**
   * A kubelet killed and started again (issue 41: the first registration after it waited out a
   * 10 s deadline): the agent's rounds meet the dead kubelet's socket in between, and the plugin
   * is registered with the new kubelet within a second of its listening, then serves it. (A plugin
   * socket made before the new kubelet empties its directory is deleted, and the kubelet then
   * waits its 10 s dial on it before it answers Register.)
   */
  @Test
  void aKubeletStartedAgainAfterACrashHasThePluginRegisteredWithinASecond() throws Exception {
    var agent = agent();
    kubelet.crash();
    var stop = new java.util.concurrent.atomic.AtomicBoolean();
    // The agent's rounds, as its timer runs them (here every 200 ms): they see the ListAndWatch gone.
    var rounds = Thread.ofPlatform().daemon().start(() -> {
      while (!stop.get()) {
        agent.round();
        try {
          Thread.sleep(200);
        } catch (InterruptedException e) {
          return;
        }
      }
    });
    try {
      Thread.sleep(700);

      kubelet.startAgain();

      // The agent may also have registered once more with the dying kubelet (its ListAndWatch ended
      // a moment before its socket went): what counts is the new one's registration.
      await().atMost(Duration.ofSeconds(30)).until(() -> kubelet.registeredSinceListening() && kubelet.devices().size() == 8);
      assertThat(kubelet.lastRegistrationAfterListening()).isLessThan(Duration.ofSeconds(1));
    } finally {
      stop.set(true);
      rounds.join(20_000);
    }
    var pod = bound("bert-worker-0", List.of(), List.of(container("pytorch", 2)), "gpu-admission.io/gpu-indices", "0,3");
    seen(agent, pod);
    kubelet.admit(pod);
    assertThat(visible(pod, "pytorch")).isEqualTo(uuids(0, 3));
  }

  @Test
  void aListAndWatchThatEndsIsFollowedByAnotherRegistrationWithTheSameKubelet() {
    var agent = agent();
    registered(agent, 1);

    kubelet.dropPlugin(); // the kubelet no longer has the plugin: it must register again to be listed

    registered(agent, 2);
    var pod = bound("bert-worker-0", List.of(), List.of(container("pytorch", 2)), "gpu-admission.io/gpu-indices", "0,3");
    seen(agent, pod);
    kubelet.admit(pod);
    assertThat(visible(pod, "pytorch")).isEqualTo(uuids(0, 3));
  }

  @Test
  void aKubeletRestartBetweenThePreferenceAndTheAllocationHandsTheChoiceOverOnTheNextAdmission() {
    var agent = agent();
    var pod = bound("bert-worker-0", List.of(), List.of(container("pytorch", 2)), "gpu-admission.io/gpu-indices", "0,3");
    seen(agent, pod);
    kubelet.beforeNextAllocate(() -> {
      kubelet.restart();
      throw new IllegalStateException("kubelet restarted");
    });
    assertThatThrownBy(() -> kubelet.admit(pod)).hasMessage("kubelet restarted");
    registered(agent, 2);

    // The new kubelet admits the pod again from the start.
    kubelet.admit(pod);

    assertThat(visible(pod, "pytorch")).isEqualTo(uuids(0, 3));
    record(agent);
    assertThat(annotation(pod, "gpu-admission.io/gpu-allocated")).isEqualTo("0,3");
  }

  @Test
  void aPodDeletedBeforeItsAdmissionLeavesItsGpusToThePodBoundToThemNext() {
    var agent = agent();
    var gone = bound("gone", List.of(), List.of(container("pytorch", 2)), "gpu-admission.io/gpu-indices", "0,3");
    seen(agent, gone);
    admin.resource(gone).withGracePeriod(0).delete();
    await().atMost(WITHIN).until(() -> !agent.sees("ml-team-a", "gone"));
    var next = bound("next", List.of(), List.of(container("pytorch", 1)), "gpu-admission.io/gpu-indices", "3");
    seen(agent, next);

    kubelet.admit(next);

    assertThat(visible(next, "pytorch")).isEqualTo(uuids(3));
  }

  @Test
  void aGpuThatLeavesTheDriversTableOrIsNamedUnhealthyIsListedUnhealthy() throws IOException {
    var agent = agent();
    try (var files = Files.list(driver.resolve("0000:8a:00.0"))) {
      for (var f : files.toList()) {
        Files.delete(f);
      }
    }
    Files.delete(driver.resolve("0000:8a:00.0"));

    agent.round();

    await().atMost(WITHIN).until(() -> kubelet.devices().stream().anyMatch(d -> d.getID().equals(GPU[7]) && d.getHealth().equals("Unhealthy")));
    assertThat(kubelet.devices()).hasSize(8);
    admin.configMaps().inNamespace("kube-system").resource(new ConfigMapBuilder().withNewMetadata().withName("unhealthy-gpu-" + NODE)
        .withNamespace("kube-system").endMetadata().addToData("gpus", "5").build()).create();
    await().atMost(WITHIN).until(() -> kubelet.devices().stream().filter(d -> d.getHealth().equals("Unhealthy")).map(d -> d.getID()).toList()
        .equals(List.of(GPU[5], GPU[7])));
  }

  @Test
  void refusesToServeNvidiasResource() {
    assertThatThrownBy(() -> new DevicePlugin.Settings(dir.resolve("device-plugins"), List.of("nvidia.com/gpu"),
        DevicePluginServer.Handover.ENV, driver, dir.resolve("sys"), Optional.empty(), Set.of("nvidia.com/gpu"), Duration.ofSeconds(3), Duration.ofSeconds(1)))
        .hasMessage("the device plugin does not serve nvidia.com/gpu: NVIDIA's device plugin owns it; serve aliyun.com/gpu");
  }
}
