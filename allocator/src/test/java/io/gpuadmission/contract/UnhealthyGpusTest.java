package io.gpuadmission.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The unhealthy-GPU ConfigMap's name and its {@code gpus} key, as the ledger and the device plugin both read them. */
class UnhealthyGpusTest {
  @Test
  void theConfigMapIsNamedAfterItsNodeInKubeSystem() {
    assertThat(UnhealthyGpus.configMapName("cn-beijing.i-topo-v100-a")).isEqualTo("unhealthy-gpu-cn-beijing.i-topo-v100-a");
    assertThat(UnhealthyGpus.NAMESPACE).isEqualTo("kube-system");
    assertThat(UnhealthyGpus.KEY).isEqualTo("gpus");
  }

  @Test
  void aConfigMapsNameGivesBackItsNodeOnlyWithThePrefix() {
    assertThat(UnhealthyGpus.nodeOf("unhealthy-gpu-gpu-node-1")).isEqualTo(Optional.of("gpu-node-1"));
    assertThat(UnhealthyGpus.nodeOf("gpu-node-1")).isEmpty();
    assertThat(UnhealthyGpus.nodeOf("kube-root-ca.crt")).isEmpty();
  }

  @Test
  void indicesAreReadSortedWithoutDuplicatesOrSpaces() {
    assertThat(UnhealthyGpus.gpus("3, 1,1 ,0")).containsExactly(0, 1, 3);
  }

  @Test
  void anUnreadableEntryIsSkippedAndTheReadableOnesKept() {
    assertThat(UnhealthyGpus.gpus("1,,x,2,")).containsExactly(1, 2);
    assertThat(UnhealthyGpus.gpus("gpu0")).isEmpty();
  }

  @Test
  void noTextMeansNoUnhealthyGpu() {
    assertThat(UnhealthyGpus.gpus(null)).isEmpty();
    assertThat(UnhealthyGpus.gpus("")).isEmpty();
  }
}
