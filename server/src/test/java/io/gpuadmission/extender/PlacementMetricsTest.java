package io.gpuadmission.extender;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.gpuadmission.cluster.NodeInventory;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.GpuNodeCapacity;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.WorkloadLearner;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.policy.PolicyStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PlacementMetricsTest {
  private static final double GIB = 1L << 30;

  @Test
  void reportsEachNodesGpusMemoryAndThePoolsFragmentationFromTheLedger() {
    var ledger = new GpuLedger();
    ledger.putNode(new GpuNodeCapacity("cgpu-a", "Tesla-V100-SXM2-16GB", List.of(16L, 16L), Optional.empty()));
    ledger.confirm(GpuClaim.bound("uid-share", "default/share-10g", "cgpu-a", List.of(0), 10));
    ledger.confirm(GpuClaim.bound("uid-whole", "default/whole-1", "cgpu-a", List.of(1), 0));
    var nodes = new NodeInventory(null, new PolicyStore());
    nodes.put(new NodeBuilder().withNewMetadata().withName("cgpu-a").addToLabels("ack.node.gpu.schedule", "cgpu").endMetadata().build());
    var registry = new SimpleMeterRegistry();
    // FGD's learned workload: the two pods' asks, 10 GiB of one GPU and one whole GPU, once each.
    var learner = new WorkloadLearner(java.time.Clock.systemUTC(), () -> Duration.ofHours(1));
    learner.seen("uid-share", GpuAsk.share(10));
    learner.seen("uid-whole", GpuAsk.whole(1));
    var decider = new PlacementDecider(ledger, PolicyParser::builtInDefault, learner);
    var metrics = new PlacementMetrics(ledger, decider, nodes, registry, Duration.ofHours(1));

    metrics.start(null);
    metrics.refresh();

    assertThat(registry.get("gpu_admission_node_gpus").tags("node", "cgpu-a", "pool", "cgpu").gauge().value()).isEqualTo(2);
    assertThat(registry.get("gpu_admission_node_gpus_allocated").tags("node", "cgpu-a", "pool", "cgpu").gauge().value()).isEqualTo(1);
    assertThat(registry.get("gpu_admission_node_gpu_memory_bytes").tags("node", "cgpu-a").gauge().value()).isEqualTo(32 * GIB);
    assertThat(registry.get("gpu_admission_node_gpu_memory_allocated_bytes").tags("node", "cgpu-a").gauge().value()).isEqualTo(26 * GIB);
    // The 6 GiB left on GPU 0 can hold neither another 10 GiB share nor a whole GPU: all of it is
    // fragmented for both asks of the workload.
    assertThat(registry.get("gpu_admission_pool_gpu_memory_fragmented_bytes").tags("pool", "cgpu").gauge().value()).isEqualTo(6 * GIB);
    assertThat(registry.get("gpu_admission_fgd_workload_pods").tags("source", "learned").gauge().value()).isEqualTo(2);
    assertThat(registry.get("gpu_admission_fgd_workload_share").tags("ask", "10GiB of one GPU").gauge().value()).isEqualTo(0.5);
    assertThat(registry.get("gpu_admission_fgd_workload_share").tags("ask", "1 whole GPU").gauge().value()).isEqualTo(0.5);
    metrics.stop(null);
  }

  @Test
  void podsOnGpusTheNodeNoLongerHasCountAsAllocatedAndOverCommitted() {
    var ledger = new GpuLedger();
    ledger.putNode(new GpuNodeCapacity("cgpu-b", "Tesla-V100-SXM2-16GB", List.of(16L, 16L, 16L, 16L), Optional.empty()));
    for (var g = 0; g < 4; g++) {
      ledger.confirm(GpuClaim.bound("uid-" + g, "default/inference-" + g, "cgpu-b", List.of(g), 12));
    }
    ledger.putNode(new GpuNodeCapacity("cgpu-b", "Tesla-V100-SXM2-16GB", List.of(16L, 16L), Optional.empty()));
    var nodes = new NodeInventory(null, new PolicyStore());
    nodes.put(new NodeBuilder().withNewMetadata().withName("cgpu-b").addToLabels("ack.node.gpu.schedule", "cgpu").endMetadata().build());
    var registry = new SimpleMeterRegistry();
    var metrics = new PlacementMetrics(ledger, new PlacementDecider(ledger, PolicyParser::builtInDefault), nodes, registry, Duration.ofHours(1));

    metrics.start(null);
    metrics.refresh();

    assertThat(registry.get("gpu_admission_node_gpus").tags("node", "cgpu-b").gauge().value()).isEqualTo(2);
    assertThat(registry.get("gpu_admission_node_gpu_memory_bytes").tags("node", "cgpu-b").gauge().value()).isEqualTo(32 * GIB);
    assertThat(registry.get("gpu_admission_node_gpu_memory_allocated_bytes").tags("node", "cgpu-b").gauge().value()).isEqualTo(48 * GIB);
    assertThat(registry.get("gpu_admission_node_gpus_overcommitted").tags("node", "cgpu-b", "pool", "cgpu").gauge().value()).isEqualTo(2);
    metrics.stop(null);
  }
}
