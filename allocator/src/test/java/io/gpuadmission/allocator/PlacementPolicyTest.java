package io.gpuadmission.allocator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PlacementPolicyTest {
  private static final long GPU = 1000;
  private final WholeGpuStrategy whole = new FirstFitStrategy();

  /** A node whose GPUs have the given free amounts (capacity 1000 each) and CPU. */
  private static NodeGpus node(String name, long cpuCapacity, long cpuFree, long... free) {
    var gpus = new ArrayList<GpuDevice>();
    for (int i = 0; i < free.length; i++) {
      gpus.add(new GpuDevice(i, "V100M16", GPU, GPU - free[i], true));
    }
    return new NodeGpus(name, gpus, Optional.empty(), cpuCapacity, cpuFree);
  }

  @Test
  void binpackPutsShareOnTheFullestGpuThatFits() {
    var policy = new HeuristicPolicy(HeuristicPolicy.Kind.BINPACK, whole);
    var n = node("a", 32000, 32000, 800, 300, 500, 1000);

    assertThat(policy.chooseOnNode(n, Task.share(1000, 300)).orElseThrow()).containsExactly(1);
    assertThat(policy.chooseOnNode(n, Task.share(1000, 400)).orElseThrow()).containsExactly(2);
  }

  @Test
  void shareOnMixedSizeNodeGoesToTheGpuThatHoldsItNotToGpuZero() {
    // GPU 0 has 8 GiB, GPU 1 has 16 GiB: 12 GiB only fits GPU 1; 8 GiB fills GPU 0 exactly (binpack).
    var mixed =
        NodeGpus.withoutCpu(
            "mixed", List.of(new GpuDevice(0, "T4", 8, 0, true), new GpuDevice(1, "V100", 16, 0, true)), Optional.empty());
    var binpack = new HeuristicPolicy(HeuristicPolicy.Kind.BINPACK, whole);

    assertThat(binpack.chooseOnNode(mixed, Task.share(0, 12)).orElseThrow()).containsExactly(1);
    assertThat(binpack.chooseOnNode(mixed, Task.share(0, 8)).orElseThrow()).containsExactly(0);
    assertThat(binpack.chooseOnNode(mixed, Task.share(0, 17))).isEmpty();
  }

  @Test
  void spreadPutsShareOnTheEmptiestGpu() {
    var policy = new HeuristicPolicy(HeuristicPolicy.Kind.SPREAD, whole);

    assertThat(policy.chooseOnNode(node("a", 32000, 32000, 800, 300, 500, 1000), Task.share(1000, 400)).orElseThrow())
        .containsExactly(3);
  }

  @Test
  void binpackRanksNodesByWhatTheChosenGpuKeeps() {
    var policy = new HeuristicPolicy(HeuristicPolicy.Kind.BINPACK, whole);
    var nodes = List.of(node("a", 32000, 32000, 900, 1000), node("b", 32000, 32000, 450, 1000), node("c", 32000, 32000, 300));

    assertThat(policy.place(nodes, Task.share(1000, 400))).contains(new Placement(1, new int[] {0}));
    assertThat(policy.scoreNode(nodes.get(2), Task.share(1000, 400))).isEmpty();
  }

  @Test
  void fgdAvoidsLeavingASliverNoLikelyTaskCanUse() {
    // Every task in the workload asks half a GPU: a GPU left with 200 is a fragment.
    var workload = TaskDistribution.of(List.of(Task.share(1000, 500)));
    var fgd = new FgdPolicy(workload, whole);
    var binpack = new HeuristicPolicy(HeuristicPolicy.Kind.BINPACK, whole);
    var nodes = List.of(node("a", 32000, 32000, 600), node("b", 32000, 32000, 1000));
    var task = Task.share(1000, 400);

    assertThat(binpack.place(nodes, task)).contains(new Placement(0, new int[] {0}));
    assertThat(fgd.place(nodes, task)).contains(new Placement(1, new int[] {0}));
  }

  @Test
  void fgdKeepsCpuWhereGpusWouldOtherwiseBeStranded() {
    // GPU tasks need 8 cores; a CPU task that leaves node a with 4 cores strands its free GPU.
    var workload = TaskDistribution.of(List.of(Task.share(8000, 500)));
    var fgd = new FgdPolicy(workload, whole);
    var nodes = List.of(node("a", 16000, 12000, 1000), node("b", 16000, 16000, 0));

    assertThat(fgd.place(nodes, Task.none(8000))).contains(new Placement(1, new int[0]));
  }

  @Test
  void cpuAwareFgdSendsCpuHeavySharesToCpuRichNodesAndCpuLightOnesToCpuPoorNodes() {
    // The workload asks 4 cores per half GPU (8 milli-CPU per unit). Node a's 20 cores serve 2,500
    // of its 3,500 free units: 1,000 are stranded already. Node b has CPU for all of its GPUs.
    var workload = TaskDistribution.of(List.of(Task.share(4000, 500)));
    var nodes = List.of(node("a", 20000, 20000, 500, 1000, 1000, 1000), node("b", 64000, 64000, 1000, 1000, 1000, 1000));
    var heavy = Task.share(8000, 500);
    var light = Task.share(1000, 500);
    var paper = new FgdPolicy(workload, whole);
    var cpuAware = new FgdPolicy(workload, whole, true);

    // FGD sees the next task fit either node after either share (no fragment): it packs onto a.
    assertThat(paper.place(nodes, heavy)).contains(new Placement(0, new int[] {0}));
    assertThat(paper.place(nodes, light)).contains(new Placement(0, new int[] {0}));
    // The heavy share would strand 500 more units on a (1,500 served by 12 cores, 3,000 free).
    assertThat(cpuAware.place(nodes, heavy)).contains(new Placement(1, new int[] {0}));
    // The light one strands 375 fewer there (2,375 served by 19 cores, 3,000 free): a, GPU 0.
    assertThat(cpuAware.place(nodes, light)).contains(new Placement(0, new int[] {0}));
    assertThat(FgdPolicy.stranded(3000, 12000, cpuAware.cpuPerGpuUnit(GPU))).isEqualTo(1500.0);
  }

  @Test
  void cpuAwareFgdIsFgdWhereCpuIsNotCounted() {
    var workload = TaskDistribution.of(List.of(Task.share(4000, 500)));
    var nodes =
        List.of(
            NodeGpus.withoutCpu("a", List.of(new GpuDevice(0, "V100M16", GPU, 500, true), new GpuDevice(1, "V100M16", GPU, 0, true)), Optional.empty()),
            NodeGpus.withoutCpu("b", List.of(new GpuDevice(0, "V100M16", GPU, 0, true), new GpuDevice(1, "V100M16", GPU, 0, true)), Optional.empty()));

    assertThat(new FgdPolicy(workload, whole, true).place(nodes, Task.share(8000, 500))).contains(new Placement(0, new int[] {0}));
  }

  @Test
  void lookaheadOpensAnEmptyGpuWithAShareWhoseRemainderCommonSharesClose() {
    // Half the tasks ask 810 (a GPU that takes one strands 190 nothing fits), half 320 (three
    // fill a GPU to 40). FGD packs the 320 onto GPU 0, whose 680 the 810s cannot use anyway; the
    // lookahead sees the empty GPU 1 likely to go to an 810 and opens it with the 320 instead.
    var workload = TaskDistribution.of(List.of(Task.share(1000, 810), Task.share(1000, 320)));
    var nodes = List.of(node("a", 64000, 64000, 680, 1000));
    var share = Task.share(1000, 320);

    assertThat(new FgdPolicy(workload, whole, FgdPolicy.Variant.CPU_AWARE).place(nodes, share)).contains(new Placement(0, new int[] {0}));
    assertThat(new FgdPolicy(workload, whole, FgdPolicy.Variant.LOOKAHEAD).place(nodes, share)).contains(new Placement(0, new int[] {1}));
  }

  @Test
  void lookaheadScoresWholeGpusAsCpuAwareFgdDoes() {
    var workload = TaskDistribution.of(List.of(Task.share(1000, 810), Task.whole(4000, 1), Task.whole(8000, 2)));
    var nodes = List.of(node("a", 64000, 20000, 190, 1000, 1000), node("b", 64000, 64000, 1000, 1000, 1000, 1000), node("c", 32000, 30000, 0, 1000));
    var cpuAware = new FgdPolicy(workload, whole, FgdPolicy.Variant.CPU_AWARE);
    var lookahead = new FgdPolicy(workload, whole, FgdPolicy.Variant.LOOKAHEAD);

    for (var task : List.of(Task.whole(4000, 1), Task.whole(8000, 2))) {
      for (var node : nodes) {
        assertThat(lookahead.scoreNode(node, task)).isEqualTo(cpuAware.scoreNode(node, task));
      }
    }
  }

  @Test
  void fgdPacksWhenGrowthDiffersByLessThanAStepOfAGpu() {
    // 2 % of tasks want 950: putting 10 on node a (955 free) strands 945 for them, an expected
    // growth of 18.9, under one step (40). Exact growth would pick b; within a step, packing picks a.
    var shapes = new ArrayList<Task>();
    for (int i = 0; i < 98; i++) {
      shapes.add(Task.share(1000, 500));
    }
    shapes.add(Task.share(1000, 950));
    shapes.add(Task.share(1000, 950));
    var fgd = new FgdPolicy(TaskDistribution.of(shapes), whole);

    assertThat(fgd.place(List.of(node("a", 32000, 32000, 955), node("b", 32000, 32000, 1000)), Task.share(1000, 10)))
        .contains(new Placement(0, new int[] {0}));
  }

  @Test
  void fgdSendsCpuOnlyTasksToNodesWithoutGpus() {
    var fgd = new FgdPolicy(TaskDistribution.of(List.of(Task.share(1000, 500))), whole);
    var cpuOnly = new NodeGpus("cpu", List.of(), Optional.empty(), 64000, 64000);

    assertThat(fgd.place(List.of(node("a", 64000, 64000, 1000), cpuOnly), Task.none(4000)))
        .contains(new Placement(1, new int[0]));
  }

  @Test
  void fragmentationCountsAllFreeGpuForTasksThatCannotFit() {
    var fragmentation = new Fragmentation(TaskDistribution.of(List.of(Task.share(8000, 500), Task.whole(4000, 2))));
    // Task 1 fits (GPU 0 has 1000 free, GPU 1's 300 is a fragment); task 2 needs 2 whole GPUs: all 1300 is fragment.
    assertThat(fragmentation.of(node("a", 16000, 16000, 1000, 300))).isEqualTo(0.5 * 300 + 0.5 * 1300);
    // Without CPU for either task, everything free is fragment.
    assertThat(fragmentation.of(node("b", 16000, 2000, 1000, 300))).isEqualTo(1300.0);
  }

  @Test
  void wholeGpuTasksTakeWhollyFreeGpusOnly() {
    var policy = new HeuristicPolicy(HeuristicPolicy.Kind.BINPACK, new TopologyAwareStrategy());
    var n = node("a", 64000, 64000, 1000, 500, 1000, 1000);

    assertThat(policy.chooseOnNode(n, Task.whole(1000, 2)).orElseThrow()).containsExactly(0, 2);
    assertThat(policy.chooseOnNode(n, Task.whole(1000, 4))).isEmpty();
  }

  @Test
  void wholeOrShareIsTheTasksKindNotAComparisonWithTheGpusSize() {
    // Spread would put a share of 8 on GPU 1 (12 free): a whole GPU is not such a share.
    var policy = new HeuristicPolicy(HeuristicPolicy.Kind.SPREAD, whole);
    // GPU 0 has 8 units, wholly free; GPU 1 has 16, 4 used. One whole GPU is GPU 0, whatever its size.
    var mixed = NodeGpus.withoutCpu("mixed", List.of(new GpuDevice(0, "T4", 8, 0, true), new GpuDevice(1, "T4", 16, 4, true)), Optional.empty());
    assertThat(policy.chooseOnNode(mixed, Task.whole(0, 1)).orElseThrow()).containsExactly(0);
    assertThat(mixed.after(Task.whole(0, 1), new int[] {0}).gpus().get(0).used()).isEqualTo(8);
    // A share the size of GPU 0 is still a share: spread puts it where most stays free, and it
    // takes its amount, not "the GPU".
    assertThat(policy.chooseOnNode(mixed, Task.share(0, 8)).orElseThrow()).containsExactly(1);
    assertThat(mixed.after(Task.share(0, 8), new int[] {1}).gpus().get(1).used()).isEqualTo(12);
    // GPUs of unknown size (0): two whole ones are still two wholly free GPUs.
    var tiny = NodeGpus.withoutCpu("tiny", List.of(new GpuDevice(0, "T4", 0, 0, true), new GpuDevice(1, "T4", 0, 0, true)), Optional.empty());
    assertThat(policy.chooseOnNode(tiny, Task.whole(0, 2)).orElseThrow()).containsExactly(0, 1);
  }

  @Test
  void refusesTasksWhoseKindDisagreesWithTheirAmounts() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new Task(Task.Kind.SHARE, 0, 2, 4, java.util.Set.of()))
        .hasMessage("invalid SHARE task: cpu 0, 2 GPUs of 4");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new Task(Task.Kind.NONE, 0, 1, 0, java.util.Set.of()))
        .hasMessage("invalid NONE task: cpu 0, 1 GPUs of 0");
  }

  @Test
  void respectsModelConstraints() {
    var policy = new HeuristicPolicy(HeuristicPolicy.Kind.BINPACK, whole);
    var task = Task.share(1000, 300).withModels(java.util.Set.of("T4"));

    assertThat(policy.scoreNode(node("a", 32000, 32000, 1000), task)).isEmpty();
  }
}
