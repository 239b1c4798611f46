package io.gpuadmission.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** One seed of the default workload, as a floor: the full table is in bench/README.md. */
class TraceSimulatorTest {
  @Test
  void acceptsGpuSpecNamingAModelTwice(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    var pods = dir.resolve("pods.csv");
    java.nio.file.Files.writeString(
        pods, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np-0,4000,1024,1,500,V100M16|V100M16|T4\n");

    var tasks = TraceSimulator.readPods(pods);

    assertThat(tasks).containsExactly(io.gpuadmission.allocator.Task.share(4000, 500).withModels(java.util.Set.of("V100M16", "T4")));
  }

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
    // The published figures (bench/README.md), pod for pod.
    assertThat(String.format("%.4f %d %d", fgd.allocationRatio(), fgd.placed(), fgd.skipped())).isEqualTo("0.9546 8366 2380");
    assertThat(String.format("%.4f %d %d", binpack.allocationRatio(), binpack.placed(), binpack.skipped())).isEqualTo("0.9452 8298 2448");
    assertThat(fgd.allocationRatio()).isGreaterThan(binpack.allocationRatio());
    assertThat(binpack.allocationRatio()).isGreaterThan(random.allocationRatio());
    assertThat(fgd.placed() + fgd.skipped()).isEqualTo(binpack.placed() + binpack.skipped());
  }
}
