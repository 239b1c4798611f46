package io.gpuadmission.gang;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.GpuCapacityMapper;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.PlacementDecider.MemberPlace;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A gang is planned only where kube-scheduler's NodeResourcesFit will take its members: on 8-GPU
 * nodes whose device plugin reports fewer GPUs ({@code status.allocatable}), the planner counts
 * allocatable less what pods hold there, not the GPU labels.
 */
class GangPlanningTest {
  private static final GpuPolicy POLICY = PolicyParser.builtInDefault();
  private static final GangKey GANG = new GangKey("ml", "bert");

  private final GpuLedger ledger = new GpuLedger();
  private final List<Node> nodes = new ArrayList<>();
  private final GangRegistry registry = new GangRegistry(() -> POLICY);
  private final GangPlanning planning = new GangPlanning(new PlacementDecider(ledger, () -> POLICY), ledger, () -> nodes, registry);

  /** An 8-GPU topology node (labels: 8 V100s) whose device plugin reports {@code allocatable} of aliyun.com/gpu. */
  private void node(String name, int allocatable) {
    var node = new NodeBuilder().withNewMetadata().withName(name)
        .addToLabels("aliyun.accelerator/nvidia_count", "8").addToLabels("aliyun.accelerator/nvidia_mem", "16160MiB")
        .addToLabels("aliyun.accelerator/nvidia_name", "Tesla-V100-SXM2-16GB").addToLabels("ack.node.gpu.schedule", "topology").endMetadata()
        .withNewStatus().addToAllocatable("aliyun.com/gpu", new Quantity(Integer.toString(allocatable))).addToAllocatable("cpu", new Quantity("96"))
        .endStatus().build();
    nodes.add(node);
    ledger.putNode(GpuCapacityMapper.map(node, POLICY.nodeLabels()).orElseThrow());
  }

  /** The gang's members: {@code members} pods of {@code gpus} whole GPUs each (the bert-worker fixture). */
  private GangStatus.Complete gang(int members, int gpus) {
    var template = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("gang/bert-worker.yaml")), Pod.class);
    for (int i = 0; i < members; i++) {
      registry.current(new PodBuilder(template)
          .editMetadata().withName("bert-worker-" + i).withUid("uid-" + i).addToLabels("gpu-topology-replica", Integer.toString(members)).endMetadata()
          .editSpec().editFirstContainer().editResources().addToLimits("aliyun.com/gpu", new Quantity(Integer.toString(gpus))).endResources()
          .endContainer().endSpec().build());
    }
    return (GangStatus.Complete) registry.status(GANG, Optional.empty());
  }

  private static MemberPlace all8(String node) {
    return new MemberPlace(node, List.of(0, 1, 2, 3, 4, 5, 6, 7));
  }

  @Test
  void plansAroundANodeWhoseAllocatableIsShort() {
    node("gpu-a", 4); // its device plugin reports 4 of the 8 GPUs its labels count (the others unhealthy)
    node("gpu-b", 8);
    node("gpu-c", 8);

    var outcome = planning.plan(GANG, gang(2, 8));

    // By labels alone gpu-a (first by name among equals) would be planned, and kube-scheduler would refuse it.
    assertThat(outcome).isInstanceOf(GangPlanning.Outcome.Planned.class);
    assertThat(((GangPlanning.Outcome.Planned) outcome).places()).containsExactly(all8("gpu-b"), all8("gpu-c"));
  }

  @Test
  void waitsNamingTheNodesWhoseAllocatableIsShort() {
    node("gpu-a", 4);
    node("gpu-b", 0); // its device plugin restarting: registered, no device reported yet
    node("gpu-c", 8);
    var complete = gang(2, 8);

    var outcome = planning.plan(GANG, complete);

    assertThat(outcome).isEqualTo(new GangPlanning.Outcome.NoRoom(1, 3,
        Map.of("gpu-a", "4 aliyun.com/gpu allocatable", "gpu-b", "0 aliyun.com/gpu allocatable")));
    assertThat(GangReasons.noRoom(GANG, complete, (GangPlanning.Outcome.NoRoom) outcome)).isEqualTo(
        "gang \"ml/bert\": needs 2 × 8 GPUs, the cluster has room for 1 (on the 3 nodes its members may run on);"
            + " status.allocatable gives fewer GPUs than the node labels count on gpu-a (4 aliyun.com/gpu allocatable)"
            + " and gpu-b (0 aliyun.com/gpu allocatable)");
  }

  @Test
  void countsWhatPodsHoldAgainstAllocatable() {
    node("gpu-a", 5);
    ledger.confirm(GpuClaim.bound("uid-other", "ml/other", "gpu-a", List.of(0, 1), 0));
    // GPUs 2-7 show free (one member of 4 by labels), but allocatable 5 less the 2 held leaves 3.

    var outcome = planning.plan(GANG, gang(2, 4));

    assertThat(outcome).isEqualTo(new GangPlanning.Outcome.NoRoom(0, 1, Map.of("gpu-a", "5 aliyun.com/gpu allocatable, 2 held by pods")));
  }

  @Test
  void aNodeWithoutAllocatableIsPlannedByItsLabels() {
    node("gpu-a", 8);
    var unknown = new NodeBuilder(nodes.get(0)).editMetadata().withName("gpu-b").endMetadata().withNewStatus().endStatus().build();
    nodes.add(unknown);
    ledger.putNode(GpuCapacityMapper.map(unknown, POLICY.nodeLabels()).orElseThrow());

    var outcome = planning.plan(GANG, gang(2, 8));

    assertThat(((GangPlanning.Outcome.Planned) outcome).places()).containsExactly(all8("gpu-a"), all8("gpu-b"));
  }
}
