package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.contract.GpuAnnotations;
import io.gpuadmission.placement.PlacementDecider.Choice;
import io.gpuadmission.placement.PlacementDecider.NodeScore;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Policy {@code topology.requireNVLink}: a topology job's whole-GPU pod gets only GPUs that are all
 * pairwise NVLink-connected on the DGX-1 of the fixtures, at filter, prioritize and bind, and every
 * other node says why not.
 */
class NvLinkPlacementTest {
  private static BindingApiServer.Started api;
  private static KubernetesClient client;

  private final GpuPolicy policy = nvlinkPolicy();
  private final GpuLedger ledger = PlacementFixtures.ledger(policy);
  private final PlacementDecider decider = new PlacementDecider(ledger, () -> policy);

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

  private static GpuPolicy nvlinkPolicy() {
    try {
      return PolicyParser.parse(Fixtures.text(Fixtures.path("placement/policy-dgx1.yaml")) + "topology:\n  requireNVLink: true\n");
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** GPUs 1, 2, 5 and 6 of the DGX-1 taken: 0, 3, 4, 7 are free, and only pairs of them are linked. */
  private void takeDgx1Gpus1256() {
    for (var gpu : List.of(1, 2, 5, 6)) {
      ledger.confirm(GpuClaim.bound("uid-" + gpu, "ml-team-a/busy-" + gpu, "gpu-dgx1", List.of(gpu), 0));
    }
  }

  @Test
  void onlyATopologyJobsPodAsksForNvLinkAndOnlyWhenThePolicySaysSo() {
    var trainer = PlacementFixtures.pod("pod-whole-2.yaml");
    var plain = new PodBuilder(trainer).editMetadata().withLabels(Collections.emptyMap()).endMetadata().build();

    assertThat(GpuAsk.of(trainer, policy)).isEqualTo(GpuAsk.nvlinked(2));
    assertThat(GpuAsk.of(trainer, policy)).hasToString("2 NVLink-connected whole GPUs");
    assertThat(GpuAsk.of(plain, policy)).isEqualTo(GpuAsk.whole(2));
    assertThat(GpuAsk.of(trainer, PlacementFixtures.dgx1Policy())).isEqualTo(GpuAsk.whole(2));
    assertThat(PolicyParser.builtInDefault().topology().requireNVLink()).isFalse();
  }

  @Test
  void filterSaysWhyNoNvLinkSetAndWhetherEvictionCouldHelp() {
    takeDgx1Gpus1256();

    var four = decider.filter(GpuAsk.nvlinked(4), List.of("gpu-dgx1", "gpu-mixed"));
    assertThat(four.passed()).isEmpty();
    assertThat(four.failed()).containsExactlyEntriesOf(Map.of("gpu-dgx1", "needs 4 NVLink-connected GPUs, best free set has 2"));
    assertThat(four.unresolvable()).containsExactlyEntriesOf(Map.of("gpu-mixed", "node has 2 healthy GPUs, pod needs 4 NVLink-connected whole GPUs"));

    var mixed = decider.filter(GpuAsk.nvlinked(2), List.of("gpu-mixed"));
    assertThat(mixed.unresolvable())
        .containsExactlyEntriesOf(
            Map.of(
                "gpu-mixed",
                "allocator.topologies has no link matrix for 2 GPUs of model Tesla-T4, so NVLink between them cannot be shown, pod needs 2 NVLink-connected whole GPUs"));

    // No eviction makes a DGX-1 link 8 GPUs pairwise: its hybrid cube-mesh links at most 4.
    var eight = decider.filter(GpuAsk.nvlinked(8), List.of("gpu-dgx1"));
    assertThat(eight.unresolvable())
        .containsExactlyEntriesOf(Map.of("gpu-dgx1", "the largest NVLink-connected set of this node is 4 GPUs, pod needs 8 NVLink-connected whole GPUs"));
    // The same pod without the requirement would only wait for the four taken GPUs.
    assertThat(decider.filter(GpuAsk.whole(8), List.of("gpu-dgx1")).failed())
        .containsExactlyEntriesOf(Map.of("gpu-dgx1", "4 of 8 GPUs free, pod needs 8 whole GPUs"));
  }

  @Test
  void chooseAndPrioritizeTakeOnlyNvLinkConnectedSets() {
    takeDgx1Gpus1256();
    ledger.putNode(new GpuNodeCapacity("gpu-dgx1-idle", "Tesla-V100-SXM2-16GB", Collections.nCopies(8, 15L), Optional.empty()));

    assertThat(decider.choose(GpuAsk.whole(3), "gpu-dgx1")).isEqualTo(new Choice.Chosen(List.of(0, 3, 4)));
    assertThat(decider.choose(GpuAsk.nvlinked(3), "gpu-dgx1"))
        .isEqualTo(new Choice.Refused("node gpu-dgx1: needs 3 NVLink-connected GPUs, best free set has 2"));
    assertThat(decider.choose(GpuAsk.nvlinked(2), "gpu-dgx1")).isEqualTo(new Choice.Chosen(List.of(0, 3)));
    assertThat(decider.choose(GpuAsk.nvlinked(4), "gpu-dgx1-idle")).isEqualTo(new Choice.Chosen(List.of(0, 1, 2, 3)));
    assertThat(decider.prioritize(GpuAsk.nvlinked(3), List.of("gpu-dgx1", "gpu-dgx1-idle")))
        .containsExactly(new NodeScore("gpu-dgx1", 0), new NodeScore("gpu-dgx1-idle", 10));
  }

  @Test
  void bindAnnotatesAnNvLinkQuadAndRefusesWhereThereIsNone() {
    var pod = client.resource(PlacementFixtures.pod("pod-topology-4.yaml")).create();
    var binder = new PodBinder(client, ledger, decider, LeaderGate.alone("replica-a"), () -> policy, Clock.systemUTC(), Duration.ofSeconds(30));
    var request = new BindRequest("ml-team-a", "trainer-4gpu-0", pod.getMetadata().getUid(), "gpu-dgx1");
    takeDgx1Gpus1256();

    assertThat(binder.bind(request))
        .isEqualTo("cannot bind ml-team-a/trainer-4gpu-0 (4 NVLink-connected whole GPUs): node gpu-dgx1: needs 4 NVLink-connected GPUs, best free set has 2");

    for (var gpu : List.of(1, 2, 5, 6)) {
      ledger.forget("uid-" + gpu);
    }
    assertThat(binder.bind(request)).isEmpty();
    assertThat(client.pods().inNamespace("ml-team-a").withName("trainer-4gpu-0").get().getMetadata().getAnnotations())
        .containsEntry(GpuAnnotations.GPU_INDICES, "0,1,2,3");
  }
}
