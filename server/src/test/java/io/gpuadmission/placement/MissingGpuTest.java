package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.GpuCapacityMapper;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import org.junit.jupiter.api.Test;

/**
 * A node relabelled to fewer GPUs while pods still hold the GPUs it lost: those pods stay counted,
 * on GPUs shown as missing, so the over-commit shows (issue 22, item 6).
 */
class MissingGpuTest {
  private static final String NODE = "cn-beijing.i-cgpu-v100-b";
  private final GpuLedger ledger = new GpuLedger();

  MissingGpuTest() {
    var labels = PolicyParser.builtInDefault().nodeLabels();
    var four = Fixtures.nodes(Fixtures.path("cluster/nodes.yaml")).stream().filter(n -> n.getMetadata().getName().equals(NODE)).findFirst().orElseThrow();
    ledger.putNode(GpuCapacityMapper.map(four, labels).orElseThrow());
    var pods = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("extender/bound-pods.yaml")), KubernetesList.class);
    for (var item : pods.getItems()) {
      item.getMetadata().setUid("uid-" + item.getMetadata().getName());
      ledger.confirm(PodClaims.claimOf((Pod) item).orElseThrow());
    }
    var two = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("placement/node-cgpu-v100-b-two-gpus.yaml")), Node.class);
    ledger.putNode(GpuCapacityMapper.map(two, labels).orElseThrow());
  }

  @Test
  void podsOnGpusANodeNoLongerHasStayCountedAndShowTheOverCommit() {
    var node = LedgerInspection.node(ledger, NODE).orElseThrow();

    assertThat(node.totalGPU()).isEqualTo(30);
    assertThat(node.usedGPU()).isEqualTo(48);
    assertThat(node.overcommittedGPUs()).isEqualTo(2);
    assertThat(node.devs())
        .containsExactly(
            device(0, 15, true, false, "inference-0"),
            device(1, 15, true, false, "inference-1"),
            device(2, 0, false, true, "inference-2"),
            device(3, 0, false, true, "inference-3"));
    assertThat(ledger.claimsOn(NODE)).hasSize(4);
  }

  @Test
  void theGpusComeBackWhenTheNodeIsRelabelledAsItWas() {
    var four = Fixtures.nodes(Fixtures.path("cluster/nodes.yaml")).stream().filter(n -> n.getMetadata().getName().equals(NODE)).findFirst().orElseThrow();
    ledger.putNode(GpuCapacityMapper.map(four, PolicyParser.builtInDefault().nodeLabels()).orElseThrow());

    var node = LedgerInspection.node(ledger, NODE).orElseThrow();

    assertThat(node.totalGPU()).isEqualTo(60);
    assertThat(node.overcommittedGPUs()).isZero();
    assertThat(node.devs()).extracting(LedgerInspection.Device::missing).containsExactly(false, false, false, false);
  }

  @Test
  void theAllocatorNeverPlacesOnAMissingGpuNorCountsItsPodsOnTheOthers() {
    var view = ledger.view(NODE).orElseThrow();

    assertThat(view.gpus()).hasSize(2).allSatisfy(gpu -> assertThat(gpu.free()).isEqualTo(3));
    assertThat(ledger.reserve(GpuClaim.reserved("new", "default/new", NODE, java.util.List.of(2), 1))).isFalse();
  }

  private static LedgerInspection.Device device(int id, long total, boolean healthy, boolean missing, String pod) {
    var use = new LedgerInspection.PodUse("default", pod, 12, "BOUND");
    return new LedgerInspection.Device(id, total, 12, healthy, missing, missing, java.util.List.of(use));
  }
}
