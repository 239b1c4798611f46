package io.gpuadmission.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The quota replay on a sample small enough for the suite: every 24th node of the trace's cluster
 * by model and GPU count, every 3rd GPU pod, arrivals 500 times faster. Borrowing never starves a
 * min, over time: while team-a (three quarters of the demand) borrows all it can, the pods the
 * other teams start under their min are placed at once (the median) or within the bound below, as
 * reclaim takes team-a's borrowed GPUs back (not always at once: a victim must leave its team at
 * or above its min, and whole GPUs must come free on one node); with no quota the same pods wait
 * far longer. Max is never passed.
 */
class QuotaReplayTest {
  private static final long BOUND_SECONDS = 2000;
  private static List<TraceSimulator.TraceNode> nodes;
  private static List<QuotaReplay.ReplayPod> pods;

  @BeforeAll
  static void load() throws IOException {
    nodes = QuotaReplay.every(QuotaReplay.sortedNodes(TraceSimulator.readNodes(Path.of("server/src/test/resources/trace/openb_node_list_gpu_node.csv"))), 24);
    pods = QuotaReplay.every(QuotaReplay.readPods(Path.of("server/src/test/resources/trace/openb_pod_list_default.csv"), 500), 3);
  }

  @Test
  void borrowingNeverStarvesAMinAndNeverPassesMax() {
    var elastic = new QuotaReplayRun(QuotaReplayRun.Mode.ELASTIC, nodes, pods).run();
    var none = new QuotaReplayRun(QuotaReplayRun.Mode.NO_QUOTA, nodes, pods).run();
    System.out.print(elastic.describe());
    System.out.print(none.describe());

    assertThat(elastic.maxViolations()).isZero();
    assertThat(elastic.evictions()).isPositive();
    for (var team : List.of("team-b", "team-c")) {
      var waits = elastic.teams().get(team);
      var unquoted = none.teams().get(team);
      assertThat(waits.neverBound()).isZero();
      assertThat(waits.percentile(waits.underMin(), 0.5)).isZero();
      // The bound: 2000 s of the replay's clock, where with no quota a twentieth of the same
      // team's pods wait over 100 minutes.
      assertThat(waits.percentile(waits.underMin(), 1.0)).isLessThanOrEqualTo(BOUND_SECONDS);
      assertThat(unquoted.percentile(unquoted.underMin(), 0.95)).isGreaterThan(3 * BOUND_SECONDS);
    }
  }
}
