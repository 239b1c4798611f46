package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.placement.PlacementDecider.Choice;
import io.gpuadmission.placement.PlacementDecider.NodeScore;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PlacementDeciderTest {
  private static final List<String> ALL = List.of("gpu-share-a", "gpu-share-b", "gpu-mixed", "gpu-dgx1", "cpu-only");
  private final io.gpuadmission.policy.GpuPolicy policy = PlacementFixtures.dgx1Policy();
  private final GpuLedger ledger = PlacementFixtures.ledger(policy);
  private final PlacementDecider decider = new PlacementDecider(ledger, () -> policy);

  private void share(String pod, String node, int gpu, long memory) {
    ledger.confirm(GpuClaim.bound("uid-" + pod, "ml-team-a/" + pod, node, List.of(gpu), memory));
  }

  @Test
  void readsPodAsksFromSummedLimits() {
    assertThat(GpuAsk.of(PlacementFixtures.pod("pod-share-8g.yaml"), policy)).isEqualTo(GpuAsk.share(8));
    assertThat(GpuAsk.of(PlacementFixtures.pod("pod-whole-2.yaml"), policy)).isEqualTo(GpuAsk.whole(2));
  }

  @Test
  void filterSaysWhyEachNodeCannotTakeTheShare() {
    for (int g = 0; g < 4; g++) {
      share("a" + g, "gpu-share-a", g, 12);
    }
    share("b0", "gpu-share-b", 0, 10);
    share("b1", "gpu-share-b", 1, 14);

    var result = decider.filter(GpuAsk.share(8), ALL);

    // A topology node has GPU memory too: pools are kept apart by the webhook's nodeSelector.
    assertThat(result.passed()).containsExactly("gpu-mixed", "gpu-dgx1");
    assertThat(result.failed())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "gpu-share-a", "largest free GPU has 3GiB of aliyun.com/gpu-mem, pod needs 8GiB",
                "gpu-share-b", "largest free GPU has 5GiB of aliyun.com/gpu-mem, pod needs 8GiB; GPUs 2,3 unhealthy"));
    assertThat(result.unresolvable()).containsExactlyEntriesOf(Map.of("cpu-only", NodeRefusal.UNKNOWN_NODE));
  }

  @Test
  void aNodeNotSeenYetIsRetriedNotSkippedForPreemption() {
    var result = decider.filter(GpuAsk.share(8), List.of("joined-a-second-ago"));

    assertThat(result.unresolvable()).isEmpty();
    assertThat(result.failed()).containsExactlyEntriesOf(Map.of("joined-a-second-ago", NodeRefusal.UNSEEN_NODE));
  }

  @Test
  void askLargerThanAnyGpuIsUnresolvable() {
    var result = decider.filter(GpuAsk.share(20), List.of("gpu-share-a", "gpu-mixed"));

    assertThat(result.passed()).isEmpty();
    assertThat(result.failed()).isEmpty();
    assertThat(result.unresolvable())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "gpu-share-a", "largest GPU has 15GiB of aliyun.com/gpu-mem, pod needs 20GiB",
                "gpu-mixed", "largest GPU has 16GiB of aliyun.com/gpu-mem, pod needs 20GiB"));
  }

  @Test
  void mixedGpuSizesAreCountedPerGpuNotAsTotalDividedByCount() {
    assertThat(ledger.capacity("gpu-mixed").orElseThrow().memory()).containsExactly(8L, 16L);

    assertThat(decider.choose(GpuAsk.share(12), "gpu-mixed")).isEqualTo(new Choice.Chosen(List.of(1)));
    assertThat(decider.choose(GpuAsk.share(8), "gpu-mixed")).isEqualTo(new Choice.Chosen(List.of(0)));
    share("big", "gpu-mixed", 1, 12);
    assertThat(decider.choose(GpuAsk.share(9), "gpu-mixed"))
        .isEqualTo(new Choice.Refused("node gpu-mixed: largest free GPU has 8GiB of aliyun.com/gpu-mem, pod needs 9GiB"));
  }

  @Test
  void aWholeGpuIsAnyWhollyFreeGpuWhateverTheSizeOfTheNodesFirst() {
    // The first GPU is the larger one and busy: the smaller GPU is still a whole GPU.
    ledger.putNode(new GpuNodeCapacity("mixed-16-8", "Tesla-T4", List.of(16L, 8L), java.util.Optional.empty()));
    share("m0", "mixed-16-8", 0, 4);

    assertThat(decider.choose(GpuAsk.whole(1), "mixed-16-8")).isEqualTo(new Choice.Chosen(List.of(1)));
    assertThat(decider.prioritize(GpuAsk.whole(1), List.of("mixed-16-8"))).containsExactly(new NodeScore("mixed-16-8", 10));
    assertThat(decider.choose(GpuAsk.share(12), "mixed-16-8")).isEqualTo(new Choice.Chosen(List.of(0)));
  }

  @Test
  void unhealthyGpusAreNeverChosen() {
    share("b0", "gpu-share-b", 0, 15);

    assertThat(decider.choose(GpuAsk.share(4), "gpu-share-b")).isEqualTo(new Choice.Chosen(List.of(1)));
    assertThat(decider.filter(GpuAsk.whole(2), List.of("gpu-share-b")).failed())
        .containsExactlyEntriesOf(Map.of("gpu-share-b", "1 of 4 GPUs free, pod needs 2 whole GPUs; GPUs 2,3 unhealthy"));
    assertThat(decider.filter(GpuAsk.whole(3), List.of("gpu-share-b")).unresolvable())
        .containsExactlyEntriesOf(Map.of("gpu-share-b", "node has 2 healthy GPUs, pod needs 3 whole GPUs; GPUs 2,3 unhealthy"));
  }

  @Test
  void wholeGpusGetTheBestConnectedFreeSet() {
    // GPU 0 busy: 1-2 and 2-3 are equal NV2 pairs on one socket; 2,3 leaves the better-connected rest.
    ledger.confirm(GpuClaim.bound("uid-x", "ml-team-a/x", "gpu-dgx1", List.of(0), 0));

    assertThat(decider.choose(GpuAsk.whole(2), "gpu-dgx1")).isEqualTo(new Choice.Chosen(List.of(2, 3)));
    assertThat(decider.choose(GpuAsk.whole(8), "gpu-dgx1"))
        .isEqualTo(new Choice.Refused("node gpu-dgx1: 7 of 8 GPUs free, pod needs 8 whole GPUs"));
  }

  @Test
  void binpackScoresTheFullerNodeHighest() {
    share("a0", "gpu-share-a", 0, 10);

    assertThat(decider.prioritize(GpuAsk.share(4), List.of("gpu-share-a", "gpu-share-b", "cpu-only")))
        .containsExactly(new NodeScore("gpu-share-a", 10), new NodeScore("gpu-share-b", 0), new NodeScore("cpu-only", 0));
  }

  @Test
  void nodePlacementLabelDecidesWhenThePolicyLeavesItToThePool() {
    ledger.putNode(new GpuNodeCapacity("spread-node", "Tesla-V100-SXM2-16GB", List.of(15L, 15L, 15L), java.util.Optional.of("spread")));
    share("s0", "spread-node", 0, 10);
    share("s1", "spread-node", 1, 2);
    share("a0", "gpu-share-a", 0, 10);
    share("a1", "gpu-share-a", 1, 2);

    // The same usage: the spread node takes the emptiest GPU, the binpack node the fullest that fits.
    assertThat(decider.choose(GpuAsk.share(4), "spread-node")).isEqualTo(new Choice.Chosen(List.of(2)));
    assertThat(decider.choose(GpuAsk.share(4), "gpu-share-a")).isEqualTo(new Choice.Chosen(List.of(0)));
  }

  @Test
  void policyPlacementOverridesTheNodeLabel() throws Exception {
    var spreadPolicy = io.gpuadmission.policy.PolicyParser.parse("sharedMemory:\n  placement: spread\n");
    var spreading = new PlacementDecider(ledger, () -> spreadPolicy);
    share("a0", "gpu-share-a", 0, 10);
    share("a1", "gpu-share-a", 1, 2);
    share("a3", "gpu-share-a", 3, 1);

    assertThat(spreading.choose(GpuAsk.share(4), "gpu-share-a")).isEqualTo(new Choice.Chosen(List.of(2)));
  }

  @Test
  void podsWithoutGpusPassUntouched() {
    var result = decider.filter(GpuAsk.NONE, ALL);

    assertThat(result.passed()).isEqualTo(ALL);
    assertThat(result.failed()).isEmpty();
  }

  @Test
  void aWholeGpuOfUnknownMemoryIsHeldByItsPod() {
    // A plain nvidia.com/gpu node: no label tells the GPUs' memory.
    ledger.putNode(new GpuNodeCapacity("plain-gpu", "Tesla-T4", List.of(0L, 0L), java.util.Optional.empty()));

    assertThat(decider.choose(GpuAsk.whole(1), "plain-gpu")).isEqualTo(new Choice.Chosen(List.of(0)));
    ledger.confirm(GpuClaim.bound("uid-t4", "ml-team-a/t4", "plain-gpu", List.of(0), 0));
    assertThat(decider.choose(GpuAsk.whole(1), "plain-gpu")).isEqualTo(new Choice.Chosen(List.of(1)));
    ledger.confirm(GpuClaim.bound("uid-t4b", "ml-team-a/t4b", "plain-gpu", List.of(1), 0));
    assertThat(decider.filter(GpuAsk.whole(1), List.of("plain-gpu")).passed()).isEmpty();
  }

  @Test
  void theAllocatorsNodeIsTheOnlyTopScoreAmongEqualNodes() {
    // Four idle nodes of one shape score alike; the first name gets 10, kube-scheduler's plugins
    // and its random pick among equal totals never see a tie at the top.
    for (var name : List.of("t4-c", "t4-a", "t4-d", "t4-b")) {
      ledger.putNode(new GpuNodeCapacity(name, "Tesla-T4", List.of(15L, 15L), java.util.Optional.empty()));
    }

    assertThat(decider.prioritize(GpuAsk.share(4), List.of("t4-c", "t4-a", "t4-d", "t4-b")))
        .containsExactly(new NodeScore("t4-c", 9), new NodeScore("t4-a", 10), new NodeScore("t4-d", 9), new NodeScore("t4-b", 9));
    assertThat(decider.best(GpuAsk.share(4), List.of("t4-d", "t4-c", "t4-b", "t4-a"))).contains("t4-a");
  }

  @Test
  void equalScoresGoToTheFullerNodeBeforeTheName() {
    // Binpack leaves no GPU free on either node for a whole GPU: equal scores. gpu-b has a quarter
    // of its GPUs free, gpu-a half: gpu-b is the fuller one, whatever the names say.
    ledger.putNode(new GpuNodeCapacity("gpu-a", "Tesla-T4", List.of(15L, 15L), java.util.Optional.empty()));
    ledger.putNode(new GpuNodeCapacity("gpu-b", "Tesla-T4", List.of(15L, 15L, 15L, 15L), java.util.Optional.empty()));
    ledger.putNode(new GpuNodeCapacity("gpu-c", "Tesla-T4", List.of(15L, 15L), java.util.Optional.empty()));
    ledger.confirm(GpuClaim.bound("uid-a0", "ml/a0", "gpu-a", List.of(0), 0));
    for (int g = 0; g < 3; g++) {
      ledger.confirm(GpuClaim.bound("uid-b" + g, "ml/b" + g, "gpu-b", List.of(g), 0));
    }

    assertThat(decider.prioritize(GpuAsk.whole(1), List.of("gpu-a", "gpu-b", "gpu-c")))
        .containsExactly(new NodeScore("gpu-a", 9), new NodeScore("gpu-b", 10), new NodeScore("gpu-c", 0));
  }

  @Test
  void fgdScoresWholeGpusAgainstAWorkloadThatCountsThem() throws Exception {
    // Node fgd-b keeps two whole GPUs and half a GPU: binpack's fuller node. A whole GPU there
    // leaves one whole GPU and a half, which no 2-GPU ask of the workload can use; on fgd-a it
    // leaves two whole GPUs.
    var fgd = io.gpuadmission.policy.PolicyParser.parse("allocator:\n  memoryShare: fgd\n");
    var learner = new WorkloadLearner(java.time.Clock.systemUTC(), () -> java.time.Duration.ofHours(1));
    learner.seen("uid-train", GpuAsk.whole(2));
    ledger.putNode(new GpuNodeCapacity("fgd-a", "Tesla-T4", List.of(16L, 16L, 16L), java.util.Optional.empty()));
    ledger.putNode(new GpuNodeCapacity("fgd-b", "Tesla-T4", List.of(16L, 16L, 16L), java.util.Optional.empty()));
    ledger.confirm(GpuClaim.bound("uid-s", "ml/s", "fgd-b", List.of(2), 8));

    var byFgd = new PlacementDecider(ledger, () -> fgd, learner);

    assertThat(byFgd.workload().weights()).containsExactlyEntriesOf(java.util.Map.of(io.gpuadmission.allocator.Task.whole(0, 2), 1.0));
    assertThat(byFgd.best(GpuAsk.whole(1), List.of("fgd-a", "fgd-b"))).contains("fgd-a");
    assertThat(decider.best(GpuAsk.whole(1), List.of("fgd-a", "fgd-b"))).contains("fgd-b");
  }

  @Test
  void theWorkloadThePolicyDeclaresWinsOverTheLearnedOne() throws Exception {
    var declared =
        io.gpuadmission.policy.PolicyParser.parse(
            "allocator:\n  memoryShare: fgd\n  fgdWorkload:\n    declared:\n    - {gpuMemory: 4, cpu: 500m, weight: 3}\n    - {gpus: 1, weight: 1}\n");
    var learner = new WorkloadLearner(java.time.Clock.systemUTC(), () -> java.time.Duration.ofHours(1));
    learner.seen("uid-train", GpuAsk.whole(2));

    var workload = new PlacementDecider(ledger, () -> declared, learner).workload();

    assertThat(workload.source()).isEqualTo(TargetWorkload.Source.POLICY);
    assertThat(workload.weights())
        .containsExactly(
            org.assertj.core.api.Assertions.entry(io.gpuadmission.allocator.Task.share(500, 4), 3.0),
            org.assertj.core.api.Assertions.entry(io.gpuadmission.allocator.Task.whole(0, 1), 1.0));
  }

  @Test
  void topologyDecidesFirstOnlyWhereALinkMatrixSaysSo() {
    // gpu-dgx1 is idle: its best pair (NV2) is free, as good as its board gets. t4-8 has no matrix:
    // every pair is alike. Neither loses connectivity, so binpack decides: t4-8, the fuller.
    ledger.putNode(new GpuNodeCapacity("t4-8", "Tesla-T4", java.util.Collections.nCopies(8, 15L), java.util.Optional.empty()));
    for (int g = 0; g < 6; g++) {
      ledger.confirm(GpuClaim.bound("uid-t" + g, "ml/t" + g, "t4-8", List.of(g), 0));
    }
    assertThat(decider.best(GpuAsk.whole(2), List.of("gpu-dgx1", "t4-8"))).contains("t4-8");

    // dgx1-b has only NV1 pairs left (0-1): fuller, but a worse pair than its board can give, so
    // the idle DGX-1 wins.
    ledger.putNode(new GpuNodeCapacity("dgx1-b", "Tesla-V100-SXM2-16GB", java.util.Collections.nCopies(8, 15L), java.util.Optional.empty()));
    for (var g : List.of(2, 3, 4, 5, 7)) {
      ledger.confirm(GpuClaim.bound("uid-d" + g, "ml/d" + g, "dgx1-b", List.of(g), 0));
    }
    assertThat(decider.best(GpuAsk.whole(2), List.of("dgx1-b", "gpu-dgx1"))).contains("gpu-dgx1");
    assertThat(decider.choose(GpuAsk.whole(2), "dgx1-b")).isEqualTo(new Choice.Chosen(List.of(0, 1)));
  }
}
