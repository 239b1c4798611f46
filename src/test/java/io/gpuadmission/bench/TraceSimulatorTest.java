package io.gpuadmission.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** One seed of the default workload, as a floor: the full table is in bench/README.md. */
class TraceSimulatorTest {
  @Test
  void fgdAllocatesAtLeast95Point4PercentOfGpusOnDefaultWorkloadAndBeatsBinpack() throws Exception {
    var simulator =
        TraceSimulator.load(
            Path.of("src/test/resources/trace/openb_node_list_gpu_node.csv"),
            Path.of("src/test/resources/trace/openb_pod_list_default.csv"));

    var fgd = simulator.run("fgd", 42, 1.3);
    var binpack = simulator.run("binpack", 42, 1.3);
    var random = simulator.run("random", 42, 1.3);

    assertThat(fgd.allocationRatio()).isGreaterThanOrEqualTo(0.954);
    assertThat(fgd.allocationRatio()).isGreaterThan(binpack.allocationRatio());
    assertThat(binpack.allocationRatio()).isGreaterThan(random.allocationRatio());
    assertThat(fgd.placed() + fgd.skipped()).isEqualTo(binpack.placed() + binpack.skipped());
  }
}
