package io.gpuadmission.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.kubescheduler.SchedulerConfiguration;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The trace simulator on a sample small enough for the suite (every 12th node of the trace's
 * cluster by model and GPU count: 102 nodes; every 10th task of the default workload), seed 42,
 * figures pinned exactly. The full tables (all nodes, six workloads) are in bench/README.md,
 * "Trace quality".
 */
class TraceSimulatorTest {
  private static TraceSimulator sample;
  private static SchedulerConfiguration shipped;

  @BeforeAll
  static void load() throws IOException {
    sample =
        TraceSimulator.load(
                Path.of("server/src/test/resources/trace/openb_node_list_gpu_node.csv"),
                Path.of("server/src/test/resources/trace/openb_pod_list_default.csv"))
            .sample(12, 10);
    shipped = TraceSimulator.shippedScheduler();
  }

  private static final java.util.Map<String, TraceSimulator.Result> RUNS = new java.util.concurrent.ConcurrentHashMap<>();

  /** Seed 42 of the sample, each setup run once for all the tests that read it. */
  private static TraceSimulator.Result run(TraceSimulator.Options options) {
    return RUNS.computeIfAbsent(options.toString(), key -> sample.run(options, 42, 1.3));
  }

  private static TraceSimulator.Result service(String policy, String through) {
    return run(TraceSimulator.Options.service(policy, through, shipped));
  }

  @Test
  void acceptsGpuSpecNamingAModelTwice(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    var pods = dir.resolve("pods.csv");
    java.nio.file.Files.writeString(
        pods, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np-0,4000,1024,1,500,V100M16|V100M16|T4\n");

    var tasks = TraceSimulator.readPods(pods);

    assertThat(tasks).containsExactly(io.gpuadmission.allocator.Task.share(4000, 500).withModels(java.util.Set.of("V100M16", "T4")));
  }

  @Test
  void throughKubeSchedulerWithTheShippedConfigurationEveryPodGoesWhereTheAllocatorChose() {
    for (var policy : new String[] {"fgd", "binpack"}) {
      var allocator = service(policy, "simulator");
      var kubeScheduler = service(policy, "kube-scheduler");

      assertThat(kubeScheduler.nodes()).as(policy).isEqualTo(allocator.nodes());
    }
    assertThat(service("fgd", "kube-scheduler").figures()).isEqualTo("0.9532 575 322");
    assertThat(service("binpack", "kube-scheduler").figures()).isEqualTo("0.9467 570 327");
  }

  @Test
  void withTheOldWeightKubeSchedulersScorersMoveThePodsAndFgdLosesItsLead() {
    var weightOne = TraceSimulator.Options.service("fgd", "kube-scheduler", shipped.withExtenderWeight(1));

    var result = run(weightOne);

    assertThat(result.nodes()).isNotEqualTo(service("fgd", "simulator").nodes());
    assertThat(result.figures()).isEqualTo("0.9194 587 310");
  }

  @Test
  void fgdWithTheLearnedWorkloadAndWithTheTracesOwnDistribution() {
    var learned = service("fgd", "simulator");
    var oracle = run(TraceSimulator.Options.service("fgd", "simulator", shipped).with("workload", "oracle"));

    assertThat(learned.figures()).isEqualTo("0.9532 575 322");
    assertThat(oracle.figures()).isEqualTo("0.9495 573 324");
  }

  @Test
  void onShareTasksFgdThroughKubeSchedulerIsAheadOfGpushare() {
    var shares = TraceSimulator.Options.service("fgd", "kube-scheduler", shipped).with("tasks", "shares");

    var fgd = run(shares);
    var gpushare = run(shares.with("policy", "gpushare"));

    assertThat(fgd.figures()).isEqualTo("0.8731 839 399");
    assertThat(gpushare.figures()).isEqualTo("0.8709 852 386");
  }

  @Test
  void thePapersSetupPlacesEveryTaskByThePolicy() {
    // CPU-only tasks placed too, by the policy, on the GPU nodes; fgd given the trace's distribution.
    var fgd = sample.run("fgd", 42, 1.3);
    var binpack = sample.run("binpack", 42, 1.3);

    assertThat(fgd.figures()).isEqualTo("0.9474 677 220");
    assertThat(binpack.figures()).isEqualTo("0.9476 677 220");
  }
}
