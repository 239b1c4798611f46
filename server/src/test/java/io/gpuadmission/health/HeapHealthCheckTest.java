package io.gpuadmission.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/** The readiness data names the heap a user sized (all of it) apart from the pool the ratio is of. */
class HeapHealthCheckTest {
  @Test
  void reportsTheWholeHeapAndTheOldGenerationByName() {
    var data = new HeapHealthCheck(new HeapPressure()).call().getData().orElseThrow();

    var heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getMax() >> 20;
    assertThat(data).containsEntry("heapMaxMiB", heap).doesNotContainKey("maxMiB");
    assertThat((Long) data.get("oldGenerationMaxMiB")).isPositive().isLessThanOrEqualTo(heap);
  }
}
