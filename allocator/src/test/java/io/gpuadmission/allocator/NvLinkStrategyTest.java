package io.gpuadmission.allocator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** NVLink-only whole-GPU sets on the DGX-1 hybrid cube-mesh of ../shared/data/topologies/. */
class NvLinkStrategyTest {
  private static final LinkMatrix DGX1 = TopologyAwareStrategyTest.load("dgx1-v100-sxm2-8gpu-hybrid-cube-mesh.txt");
  private final NvLinkStrategy strategy = new NvLinkStrategy(new TopologyAwareStrategy());

  /** A DGX-1 with the GPUs of {@code usedBits} taken. */
  private static NodeGpus dgx1(int usedBits) {
    return Nodes.withUsed(DGX1, Nodes.mask(8, usedBits));
  }

  @Test
  void idleDgx1GivesFourGpusAsOneOfItsTwoFullyLinkedQuads() {
    assertThat(strategy.choose(dgx1(0), 4).orElseThrow().gpus()).containsExactly(0, 1, 2, 3);
    assertThat(strategy.choose(dgx1(0b0000_0001), 4).orElseThrow().gpus()).containsExactly(4, 5, 6, 7);
    assertThat(NvLinkStrategy.largestFreeSet(dgx1(0))).contains(4);
  }

  @Test
  void refusesSetsWithAPairOnlyOverPcieWhereTopologyAloneWouldTakeThem() {
    // GPUs 1, 2, 5, 6 taken: 0, 3, 4, 7 are free; 0-7 and 3-4 are SYS, so no three are all linked.
    var node = dgx1(0b0110_0110);

    assertThat(new TopologyAwareStrategy().choose(node, 3).orElseThrow().gpus()).containsExactly(0, 3, 4);
    assertThat(strategy.choose(node, 3)).isEmpty();
    assertThat(strategy.choose(node, 2).orElseThrow().gpus()).containsExactly(0, 3);
    assertThat(NvLinkStrategy.largestFreeSet(node)).contains(2);
    assertThat(NvLinkStrategy.largestHealthySet(node)).contains(4);
  }

  @Test
  void eightGpusOfADgx1AreNeverAllPairwiseLinked() {
    assertThat(strategy.choose(dgx1(0), 8)).isEmpty();
    assertThat(NvLinkStrategy.largestHealthySet(dgx1(0))).contains(4);
  }

  @Test
  void withoutALinkMatrixOnlyASingleGpuIsServed() {
    var plain = NodeGpus.withoutCpu("plain", List.of(new GpuDevice(0, "T4", 16, 0, true), new GpuDevice(1, "T4", 16, 0, true)), Optional.empty());

    assertThat(strategy.choose(plain, 2)).isEmpty();
    assertThat(strategy.choose(plain, 1).orElseThrow().gpus()).containsExactly(0);
    assertThat(NvLinkStrategy.largestFreeSet(plain)).isEmpty();
  }

  @Test
  void nvSwitchBoardsLeaveTheChoiceToTheWrappedStrategy() {
    var links = TopologyAwareStrategyTest.load("hgx-h100-8gpu-nvswitch-partial.txt");
    var node = Nodes.withUsed(links, Nodes.mask(8, 0b0000_0101));

    assertThat(strategy.choose(node, 6)).isEqualTo(new TopologyAwareStrategy().choose(node, 6));
    assertThat(NvLinkStrategy.largestFreeSet(node)).contains(6);
  }

  @Test
  void aGangPlannedWithItTakesBothQuadsOfADgx1AndNoMore() {
    var planner = new GangPlanner(strategy);

    assertThat(planner.plan(List.of(dgx1(0)), 2, 4))
        .isEqualTo(new GangPlanner.Result.Planned(List.of(new Placement(0, new int[] {0, 1, 2, 3}), new Placement(0, new int[] {4, 5, 6, 7}))));
    assertThat(planner.plan(List.of(dgx1(0b0110_0110)), 1, 3)).isEqualTo(new GangPlanner.Result.NoRoom(0));
  }

  @Test
  void choosesWhatExhaustiveSearchOverLinkedSetsChoosesForEveryUsedPattern() {
    for (int used = 0; used < 256; used++) {
      for (int count = 2; count <= 4; count++) {
        var expected = bestLinkedSet(DGX1, Nodes.mask(8, used), count);
        var actual = strategy.choose(dgx1(used), count).map(c -> Arrays.stream(c.gpus()).boxed().toList());
        assertThat(actual).as("used %s, %d GPUs", Integer.toBinaryString(used), count).isEqualTo(expected.map(Arrays::asList));
      }
    }
  }

  /** Every set of free GPUs, pairwise NVLinked, ordered as the strategy promises. */
  private static Optional<Integer[]> bestLinkedSet(LinkMatrix links, boolean[] used, int count) {
    var free = new ArrayList<Integer>();
    for (int g = 0; g < 8; g++) {
      if (!used[g]) {
        free.add(g);
      }
    }
    var freeArray = free.stream().mapToInt(Integer::intValue).toArray();
    Integer[] best = null;
    GpuChoice bestChoice = null;
    for (int mask = 0; mask < 256; mask++) {
      if (Integer.bitCount(mask) != count) {
        continue;
      }
      var set = new ArrayList<Integer>();
      var linked = true;
      for (int g = 0; g < 8; g++) {
        if ((mask >> g & 1) == 1) {
          linked &= !used[g];
          for (var other : set) {
            linked &= links.link(g, other).nvlinks() > 0;
          }
          set.add(g);
        }
      }
      if (!linked) {
        continue;
      }
      var choice = TopologyAwareStrategy.scored(links, freeArray, set.stream().mapToInt(Integer::intValue).toArray());
      var better =
          bestChoice == null
              || choice.setScore() > bestChoice.setScore()
              || (choice.setScore() == bestChoice.setScore() && choice.remainingScore() > bestChoice.remainingScore())
              || (choice.setScore() == bestChoice.setScore() && choice.remainingScore() == bestChoice.remainingScore() && lexLess(set, best));
      if (better) {
        bestChoice = choice;
        best = set.toArray(new Integer[0]);
      }
    }
    return Optional.ofNullable(best);
  }

  private static boolean lexLess(List<Integer> set, Integer[] than) {
    for (int i = 0; i < than.length; i++) {
      if (!set.get(i).equals(than[i])) {
        return set.get(i) < than[i];
      }
    }
    return false;
  }
}
