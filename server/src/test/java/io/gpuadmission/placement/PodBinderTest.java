package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.placement.GpuClaim.Phase;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.support.MutableClock;
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
    var decider = new PlacementDecider(ledger, () -> policy, () -> TargetWorkload.NONE, PlacementFixtures::node);
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
    assertThat(PodClaims.claimOf(bound)).contains(GpuClaim.bound(pod.getMetadata().getUid(), NS + "/trainer-0", "gpu-dgx1", List.of(0, 3), 0));
  }

  @Test
  void bindsAPodWhoseOnlyGpuAskIsAnInitContainersShare() {
    var pod = create("pod-init-only-share-5g.yaml");

    assertThat(binder.bind(request(pod, "gpu-share-a"))).isEmpty();

    assertThat(client.pods().inNamespace(NS).withName("warmup-5g").get().getMetadata().getAnnotations())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "ALIYUN_COM_GPU_MEM_IDX", "0",
                "ALIYUN_COM_GPU_MEM_POD", "5",
                "ALIYUN_COM_GPU_MEM_DEV", "15",
                "ALIYUN_COM_GPU_MEM_ASSIGNED", "false",
                "ALIYUN_COM_GPU_MEM_ASSUME_TIME", "1795323600123456789"));
    assertThat(client.pods().inNamespace(NS).withName("warmup-5g").get().getSpec().getNodeName()).isEqualTo("gpu-share-a");
  }

  @Test
  void aShareIsTheLargerOfTheInitContainersAndTheRegularContainersSum() {
    var pod = create("pod-init-12g-main-4g.yaml");
    ledger.confirm(GpuClaim.bound("other", NS + "/other", "gpu-share-a", List.of(1), 3));

    assertThat(binder.bind(request(pod, "gpu-share-a"))).isEmpty();

    var annotations = client.pods().inNamespace(NS).withName("convert-12g").get().getMetadata().getAnnotations();
    assertThat(annotations).containsEntry("ALIYUN_COM_GPU_MEM_POD", "12").containsEntry("ALIYUN_COM_GPU_MEM_IDX", "1");
    assertThat(LedgerInspection.node(ledger, "gpu-share-a").orElseThrow().devs().get(1).usedGPU()).isEqualTo(15);
  }

  @Test
  void wholeGpusHeldByAnInitContainerAreThePodsCount() {
    var pod = create("pod-init-3-main-1-gpus.yaml");

    assertThat(binder.bind(request(pod, "gpu-dgx1"))).isEmpty();

    assertThat(client.pods().inNamespace(NS).withName("calibrate-3").get().getMetadata().getAnnotations())
        .containsExactlyInAnyOrderEntriesOf(Map.of("gpu-admission.io/gpu-indices", "0,2,3",
            // Each container's part for the node's device plugin: the init container's GPUs, one of them handed on.
            "gpu-admission.io/container-gpus", "calibrate=0,2,3;infer=0"));
    assertThat(ledger.claims().get(pod.getMetadata().getUid()).gpus()).containsExactly(0, 2, 3);
  }

  @Test
  void aSecondBindOfABoundPodSaysWhereItIsBoundAndChangesNothing() {
    var pod = create("pod-share-8g.yaml");
    assertThat(binder.bind(request(pod, "gpu-share-a"))).isEmpty();
    var first = client.pods().inNamespace(NS).withName("notebook-8g").get().getMetadata().getAnnotations();
    var claim = ledger.claims().get(pod.getMetadata().getUid());
    var bindings = api.bindings().created();

    assertThat(binder.bind(request(pod, "gpu-share-b")))
        .isEqualTo("pod ml-team-a/notebook-8g is already bound to node gpu-share-a (GPU 0, 8GiB of aliyun.com/gpu-mem); a pod is bound only once");
    assertThat(binder.bind(request(pod, "gpu-share-a")))
        .isEqualTo("pod ml-team-a/notebook-8g is already bound to node gpu-share-a (GPU 0, 8GiB of aliyun.com/gpu-mem); a pod is bound only once");
    assertThat(client.pods().inNamespace(NS).withName("notebook-8g").get().getMetadata().getAnnotations()).isEqualTo(first);
    assertThat(ledger.claims()).containsExactly(Map.entry(pod.getMetadata().getUid(), claim));
    assertThat(api.bindings().created()).isEqualTo(bindings);
  }

  @Test
  void bindRefusesANodeThePodsNodeSelectorLeavesOut() {
    var pod = create("pod-share-8g.yaml");

    assertThat(binder.bind(request(pod, "gpu-mixed")))
        .isEqualTo(
            "cannot bind ml-team-a/notebook-8g (8GiB of one GPU): node gpu-mixed: its label ack.node.gpu.schedule is \"share\","
                + " the pod's nodeSelector asks \"cgpu\"");
    assertThat(client.pods().inNamespace(NS).withName("notebook-8g").get().getMetadata().getAnnotations()).isNullOrEmpty();
    assertThat(ledger.claims()).isEmpty();
  }

  @Test
  void bindRefusesANodeThatOffersNoneOfTheGpuResourceThePodAsks() {
    var pod = client.resource(PlacementFixtures.sharePod("plain-4g", NS, 4)).create();

    assertThat(binder.bind(request(pod, "gpu-dgx1")))
        .isEqualTo(
            "cannot bind ml-team-a/plain-4g (4GiB of one GPU): node gpu-dgx1: it has no allocatable aliyun.com/gpu-mem"
                + " (its GPU resources: aliyun.com/gpu=8), pod needs 4");
    assertThat(client.pods().inNamespace(NS).withName("plain-4g").get().getSpec().getNodeName()).isNull();
    assertThat(ledger.claims()).isEmpty();
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
  void aPodBoundElsewhereBeforeBindIsNotAnnotatedOrBoundAgain() {
    var pod = create("pod-share-8g.yaml");
    client.pods().inNamespace(NS).withName("notebook-8g").edit(p -> {
      p.getSpec().setNodeName("gpu-share-b");
      return p;
    });

    assertThat(binder.bind(request(pod, "gpu-share-a"))).isEqualTo("pod ml-team-a/notebook-8g is already bound to node gpu-share-b; a pod is bound only once");
    assertThat(client.pods().inNamespace(NS).withName("notebook-8g").get().getMetadata().getAnnotations()).isNullOrEmpty();
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
    var gate = new LeaderGate("replica-b", Clock.fixed(NOW, ZoneOffset.UTC));
    gate.leaseSeen("replica-a", NOW.plusSeconds(5));
    var pod = create("pod-share-8g.yaml");

    assertThat(binder(gate).bind(request(pod, "gpu-share-a"))).isEqualTo("gpu-admission replica replica-b is not the leader (leader: replica-a); retry");
    assertThat(ledger.claims()).isEmpty();
  }

  @Test
  void aLeaderWhoseLeaseExpiredIsNotNamed() {
    var clock = new MutableClock(NOW);
    var gate = new LeaderGate("replica-b", clock);
    gate.leaseSeen("replica-a", NOW.plusSeconds(5));
    clock.now = NOW.plusSeconds(5);

    assertThat(binder(gate).notLeader())
        .isEqualTo("no gpu-admission replica holds the placement Lease now (replica-a's expired at 2026-11-22T05:00:05Z);"
            + " gpu-admission replica replica-b campaigns for it; retry");
    gate.leaseSeen("", NOW.plusSeconds(6));
    assertThat(binder(gate).notLeader())
        .isEqualTo("no gpu-admission replica holds the placement Lease now; gpu-admission replica replica-b campaigns for it; retry");
  }

  @Test
  void aReplicaHoldingTheLeaseNeverCallsItselfAFollower() {
    var clock = new MutableClock(NOW);
    var gate = new LeaderGate("replica-a", clock);
    gate.leaseSeen("replica-a", NOW.plusSeconds(15));
    gate.renewed(NOW.plusSeconds(10));
    var binder = binder(gate);

    // Holding the Lease, the ledger not rebuilt yet.
    assertThat(binder.notLeader()).isEqualTo("gpu-admission replica replica-a holds the placement Lease and binds once it has read the pods into its GPU ledger; retry");
    gate.lead();
    assertThat(gate.leading()).isTrue();
    // No renewal reached the API server for the renew deadline: it stops binding at once.
    clock.now = NOW.plusSeconds(10);
    assertThat(gate.leading()).isFalse();
    assertThat(binder.notLeader()).isEqualTo("gpu-admission replica replica-a could not renew the placement Lease before its renew deadline and stopped binding; retry");
    clock.now = NOW.plusSeconds(15);
    assertThat(binder.notLeader())
        .isEqualTo("no gpu-admission replica holds the placement Lease now (replica-a's expired at 2026-11-22T05:00:15Z);"
            + " gpu-admission replica replica-a campaigns for it; retry");
  }

  @Test
  void aLeaderWhoseRenewDeadlinePassesMidBindCreatesNoBinding() {
    var clock = new MutableClock(NOW);
    var gate = new LeaderGate("replica-a", clock);
    gate.leaseSeen("replica-a", NOW.plusSeconds(15));
    gate.renewed(NOW.plusSeconds(10));
    gate.lead();
    var pod = create("pod-share-8g.yaml");
    var bindings = api.bindings().created();
    // The API server takes the renew deadline to answer the annotations' patch.
    api.bindings().onPodPatch(() -> clock.now = NOW.plusSeconds(10));
    try {
      assertThat(binder(gate).bind(request(pod, "gpu-share-a")))
          .isEqualTo("gpu-admission replica replica-a could not renew the placement Lease before its renew deadline and stopped binding; retry");
    } finally {
      api.bindings().onPodPatch(() -> {});
    }

    assertThat(api.bindings().created()).isEqualTo(bindings);
    assertThat(client.pods().inNamespace(NS).withName("notebook-8g").get().getSpec().getNodeName()).isNull();
    assertThat(ledger.claims()).isEmpty();
  }

  /**
   * The old leader read the pod; before its annotations' patch lands, the new leader binds the pod
   * (GPU 1 of gpu-share-b). The late patch carries the resourceVersion bind read, so the API server
   * refuses it: the new leader's annotations stay, no second Binding is made, the error says why.
   */
  @Test
  void aLatePatchOfAnOldLeaderDoesNotOverwriteTheChoiceOfThePodsBind() {
    var pod = create("pod-share-8g.yaml");
    var bindings = api.bindings().created();
    var newLeaders =
        Map.of(
            "ALIYUN_COM_GPU_MEM_IDX", "1",
            "ALIYUN_COM_GPU_MEM_POD", "8",
            "ALIYUN_COM_GPU_MEM_DEV", "15",
            "ALIYUN_COM_GPU_MEM_ASSIGNED", "false",
            "ALIYUN_COM_GPU_MEM_ASSUME_TIME", "1795323601000000000");
    var once = new java.util.concurrent.atomic.AtomicBoolean();
    api.bindings().onPodPatch(() -> {
      if (once.compareAndSet(false, true)) {
        api.bindings().bindAsAnotherReplica(NS, "notebook-8g", "gpu-share-b", newLeaders);
      }
    });
    try {
      assertThat(binder.bind(request(pod, "gpu-share-a")))
          .isEqualTo("lost the race to bind: pod ml-team-a/notebook-8g is already bound to node gpu-share-b"
              + " (GPU 1, 8GiB of aliyun.com/gpu-mem); a pod is bound only once");
    } finally {
      api.bindings().onPodPatch(() -> {});
    }

    var after = client.pods().inNamespace(NS).withName("notebook-8g").get();
    assertThat(after.getMetadata().getAnnotations()).containsExactlyInAnyOrderEntriesOf(newLeaders);
    assertThat(after.getSpec().getNodeName()).isEqualTo("gpu-share-b");
    assertThat(api.bindings().created()).isEqualTo(bindings + 1);
    assertThat(ledger.claims()).isEmpty();
  }

  /** A pod updated (not bound) between bind's read and its patch: nothing is written, kube-scheduler retries. */
  @Test
  void aPodUpdatedBetweenReadAndPatchIsNotAnnotatedOrBound() {
    var pod = create("pod-share-8g.yaml");
    var bindings = api.bindings().created();
    var once = new java.util.concurrent.atomic.AtomicBoolean();
    api.bindings().onPodPatch(() -> {
      if (once.compareAndSet(false, true)) {
        api.bindings().labelInProcess(NS, "notebook-8g", "touched", "yes");
      }
    });
    try {
      assertThat(binder.bind(request(pod, "gpu-share-a")))
          .isEqualTo("pod ml-team-a/notebook-8g changed while it was being bound (resourceVersion " + pod.getMetadata().getResourceVersion()
              + " is no longer current); nothing was written, retry");
    } finally {
      api.bindings().onPodPatch(() -> {});
    }

    var after = client.pods().inNamespace(NS).withName("notebook-8g").get();
    assertThat(after.getMetadata().getAnnotations()).isNullOrEmpty();
    assertThat(after.getSpec().getNodeName()).isNull();
    assertThat(api.bindings().created()).isEqualTo(bindings);
    assertThat(ledger.claims()).isEmpty();
    assertThat(binder.bind(request(pod, "gpu-share-a"))).isEmpty();
  }
}
