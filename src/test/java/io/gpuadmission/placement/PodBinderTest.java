package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.placement.GpuClaim.Phase;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.support.Fixtures;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Bind against a mock API server: the patch, the Binding, and every way it can go wrong. */
class PodBinderTest {
  private static final Instant NOW = Instant.parse("2026-11-22T05:00:00.123456789Z");
  private static final String NS = "ml-team-a";
  private static BindingApiServer.Started api;
  private static KubernetesClient client;

  private final GpuPolicy policy = PlacementFixtures.dgx1Policy();
  private GpuLedger ledger;
  private PodBinder binder;

  @BeforeAll
  static void startServer() {
    api = BindingApiServer.start();
    client = api.client();
  }

  @AfterAll
  static void stopServer() {
    client.close();
    api.server().destroy();
  }

  @BeforeEach
  void setUp() {
    client.pods().inAnyNamespace().delete();
    ledger = PlacementFixtures.ledger(policy);
    binder = binder(LeaderGate.alone("replica-a"));
  }

  private PodBinder binder(LeaderGate gate) {
    var decider = new PlacementDecider(ledger, () -> policy);
    return new PodBinder(client, ledger, decider, gate, () -> policy, Clock.fixed(NOW, ZoneOffset.UTC), Duration.ofSeconds(30));
  }

  private io.fabric8.kubernetes.api.model.Pod create(String file) {
    return client.resource(PlacementFixtures.pod(file)).create();
  }

  private static BindRequest request(io.fabric8.kubernetes.api.model.Pod pod, String node) {
    return new BindRequest(NS, pod.getMetadata().getName(), pod.getMetadata().getUid(), node);
  }

  @Test
  void bindWritesGpushareAnnotationsThenCreatesTheBinding() {
    var pod = create("pod-share-8g.yaml");
    ledger.confirm(GpuClaim.bound("other", NS + "/other", "gpu-share-a", List.of(2), 4));

    assertThat(binder.bind(request(pod, "gpu-share-a"))).isEmpty();

    var bound = client.pods().inNamespace(NS).withName("notebook-8g").get();
    assertThat(bound.getMetadata().getAnnotations())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "ALIYUN_COM_GPU_MEM_IDX", "2",
                "ALIYUN_COM_GPU_MEM_POD", "8",
                "ALIYUN_COM_GPU_MEM_DEV", "15",
                "ALIYUN_COM_GPU_MEM_ASSIGNED", "false",
                "ALIYUN_COM_GPU_MEM_ASSUME_TIME", "1795323600123456789"));
    assertThat(bound.getSpec().getNodeName()).isEqualTo("gpu-share-a");
    assertThat(ledger.claims().get(pod.getMetadata().getUid()))
        .isEqualTo(new GpuClaim(pod.getMetadata().getUid(), NS + "/notebook-8g", "gpu-share-a", List.of(2), 8, Phase.ASSUMED, NOW.plusSeconds(30)));
  }

  @Test
  void wholeGpuPodGetsTheTopologyAwareIndices() {
    var pod = create("pod-whole-2.yaml");

    assertThat(binder.bind(request(pod, "gpu-dgx1"))).isEmpty();

    var bound = client.pods().inNamespace(NS).withName("trainer-0").get();
    assertThat(bound.getMetadata().getAnnotations()).containsExactlyEntriesOf(Map.of("gpu-admission.io/gpu-indices", "0,3"));
    assertThat(GpuAnnotations.claimOf(bound)).contains(GpuClaim.bound(pod.getMetadata().getUid(), NS + "/trainer-0", "gpu-dgx1", List.of(0, 3), 0));
  }

  @Test
  void topologyPodAlsoGetsAcksAnnotationsWhenThePolicyAsks() throws Exception {
    var ack = io.gpuadmission.policy.PolicyParser.parse(
        Fixtures.text(Fixtures.path("placement/policy-dgx1.yaml")) + "topology:\n  ackAnnotations: true\n");
    var decider = new PlacementDecider(ledger, () -> ack);
    var withAck = new PodBinder(client, ledger, decider, LeaderGate.alone("replica-a"), () -> ack, Clock.fixed(NOW, ZoneOffset.UTC),
        Duration.ofSeconds(30));
    var topology = create("pod-topology-4.yaml");
    var plain = client.resource(new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata().withName("inference-0").withNamespace(NS)
        .endMetadata().withNewSpec().addNewContainer().withName("c").withImage("cuda").withNewResources()
        .addToLimits("nvidia.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("2")).endResources().endContainer().endSpec().build()).create();

    assertThat(withAck.bind(request(topology, "gpu-dgx1"))).isEmpty();
    assertThat(withAck.bind(request(plain, "gpu-dgx1"))).isEmpty();

    assertThat(client.pods().inNamespace(NS).withName("trainer-4gpu-0").get().getMetadata().getAnnotations())
        .containsExactlyInAnyOrderEntriesOf(Map.of(
            "gpu-admission.io/gpu-indices", "0,1,2,3",
            "topology.kubernetes.io/gpu-group", "0,1,2,3",
            "topology.kubernetes.io/gpu-visible", "0,1,2,3"));
    // A pod that is no topology job gets our annotation only, policy or not.
    assertThat(client.pods().inNamespace(NS).withName("inference-0").get().getMetadata().getAnnotations())
        .containsExactlyEntriesOf(Map.of("gpu-admission.io/gpu-indices", "4,7"));
  }

  @Test
  void topologyPodGetsOnlyOurAnnotationByDefault() {
    var topology = create("pod-topology-4.yaml");

    assertThat(binder.bind(request(topology, "gpu-dgx1"))).isEmpty();

    assertThat(client.pods().inNamespace(NS).withName("trainer-4gpu-0").get().getMetadata().getAnnotations())
        .containsOnlyKeys("gpu-admission.io/gpu-indices");
  }

  @Test
  void bindingRefusedWith500RollsTheReservationBack() {
    var pod = create("pod-share-8g.yaml");
    api.bindings().failNext(500);

    assertThat(binder.bind(request(pod, "gpu-share-a")))
        .isEqualTo("binding pod ml-team-a/notebook-8g to node gpu-share-a failed: injected failure 500 (HTTP 500)");
    assertThat(ledger.claims()).isEmpty();
    assertThat(LedgerInspection.node(ledger, "gpu-share-a").orElseThrow().usedGPU()).isZero();
    assertThat(binder.bind(request(pod, "gpu-share-a"))).isEmpty();
  }

  @Test
  void bindingRefusedWith409ForAPodAlreadyBoundRollsTheReservationBack() {
    var pod = create("pod-share-8g.yaml");
    client.pods().inNamespace(NS).withName("notebook-8g").edit(p -> {
      p.getSpec().setNodeName("gpu-share-b");
      return p;
    });

    assertThat(binder.bind(request(pod, "gpu-share-a")))
        .isEqualTo(
            "binding pod ml-team-a/notebook-8g to node gpu-share-a failed: pod notebook-8g is already assigned to node \"gpu-share-b\" (HTTP 409)");
    assertThat(ledger.claims()).isEmpty();
  }

  @Test
  void podDeletedBetweenFilterAndBindIsReported() {
    var pod = PlacementFixtures.pod("pod-share-8g.yaml");

    assertThat(binder.bind(request(pod, "gpu-share-a"))).isEqualTo("pod ml-team-a/notebook-8g not found: it was deleted before bind");
    assertThat(ledger.claims()).isEmpty();
  }

  @Test
  void nodeRemovedBetweenFilterAndBindIsReported() {
    var pod = create("pod-share-8g.yaml");
    ledger.removeNode("gpu-share-a");

    assertThat(binder.bind(request(pod, "gpu-share-a")))
        .isEqualTo("cannot bind ml-team-a/notebook-8g (8GiB of one GPU): node gpu-share-a: this node was deleted");
    assertThat(client.pods().inNamespace(NS).withName("notebook-8g").get().getMetadata().getAnnotations()).isNullOrEmpty();
  }

  @Test
  void replacedPodIsNotBoundInItsPredecessorsPlace() {
    var pod = create("pod-share-8g.yaml");

    assertThat(binder.bind(new BindRequest(NS, "notebook-8g", "old-uid", "gpu-share-a")))
        .isEqualTo("pod ml-team-a/notebook-8g was replaced (UID " + pod.getMetadata().getUid() + ", asked old-uid)");
  }

  @Test
  void followerRefusesToBindAndNamesTheLeader() {
    var gate = new LeaderGate("replica-b");
    gate.leaderIs("replica-a");
    var pod = create("pod-share-8g.yaml");

    assertThat(binder(gate).bind(request(pod, "gpu-share-a"))).isEqualTo("gpu-admission replica replica-b is not the leader (leader: replica-a); retry");
    assertThat(ledger.claims()).isEmpty();
  }
}
