package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.GpuNodeCapacity;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * nodeCacheCapable: false: the Node objects kube-scheduler sends (placement/nodes.yaml) stand in
 * for nodes the informer has not shown yet, and never for ones it has.
 */
class SchedulerNodesTest {
  private static final String UNSEEN = "gpu-admission has not seen this node yet (its node cache is still filling); retried at the next attempt";

  private final io.gpuadmission.policy.GpuPolicy policy = PolicyParser.builtInDefault();
  private final GpuLedger ledger = new GpuLedger();
  private final PlacementDecider decider = new PlacementDecider(ledger, () -> policy);
  private final List<io.fabric8.kubernetes.api.model.Node> sent = Fixtures.nodes(Fixtures.path("placement/nodes.yaml"));

  @Test
  void nodesTheInformerHasNotShownAreReadFromTheRequest() {
    assertThat(decider.filter(GpuAsk.share(12), List.of("gpu-mixed", "cpu-only")).failed())
        .containsExactlyInAnyOrderEntriesOf(Map.of("gpu-mixed", UNSEEN, "cpu-only", UNSEEN));

    SchedulerNodes.learnUnseen(ledger, sent, policy.nodeLabels());

    var result = decider.filter(GpuAsk.share(12), List.of("gpu-mixed", "cpu-only", "gpu-share-a"));
    assertThat(result.passed()).containsExactly("gpu-mixed", "gpu-share-a");
    assertThat(result.unresolvable())
        .containsExactlyEntriesOf(Map.of("cpu-only", "no GPUs known on this node (no GPU labels or allocatable GPU resources)"));
    // Read per GPU with the informer's own mapping: the mixed node's 8 and 16 GiB.
    assertThat(ledger.capacity("gpu-mixed").orElseThrow().memory()).containsExactly(8L, 16L);
    assertThat(decider.choose(GpuAsk.share(12), "gpu-mixed")).isEqualTo(new PlacementDecider.Choice.Chosen(List.of(1)));
  }

  @Test
  void theInformersViewWinsBeforeAndAfter() {
    ledger.putNode(new GpuNodeCapacity("gpu-share-a", "Tesla-V100-SXM2-16GB", List.of(15L, 15L), Optional.empty()));
    ledger.removeNode("gpu-dgx1");

    SchedulerNodes.learnUnseen(ledger, sent, policy.nodeLabels());

    assertThat(ledger.capacity("gpu-share-a").orElseThrow().memory()).containsExactly(15L, 15L);
    assertThat(ledger.view("gpu-dgx1")).isEmpty();
    assertThat(decider.filter(GpuAsk.whole(1), List.of("gpu-dgx1")).unresolvable()).containsExactlyEntriesOf(Map.of("gpu-dgx1", "this node was deleted"));

    ledger.putNode(new GpuNodeCapacity("gpu-mixed", "Tesla-T4", List.of(16L, 16L), Optional.empty()));
    assertThat(ledger.capacity("gpu-mixed").orElseThrow().memory()).containsExactly(16L, 16L);
  }
}
