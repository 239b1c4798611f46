package io.gpuadmission.allocator;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class TopologyAwareStrategyTest {
  private static final Path DATA = Path.of("src/test/resources/topologies");
  private final TopologyAwareStrategy strategy = new TopologyAwareStrategy();

  static LinkMatrix load(String file) {
    try {
      return TopologyParser.parse(Files.readString(DATA.resolve(file)), file.contains("partial"));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static Stream<String> eightGpuBoards() {
    return Stream.of(
        "dgx1-v100-sxm2-8gpu-hybrid-cube-mesh.txt",
        "dgx-a100-8gpu-nvswitch-partial.txt",
        "hgx-h100-8gpu-nvswitch-partial.txt",
        "pcie-8gpu-rtx4090-all-sys.txt",
        "pcie-8gpu-nvlink-bridge-pairs.txt",
        "synthetic-pcie-8gpu-pix-pxb.txt");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("eightGpuBoards")
  void matchesExhaustiveSearchForEveryUsedPatternAndRequestSize(String file) {
    var links = load(file);
    var checked = 0;
    for (int bits = 0; bits < 256; bits++) {
      var used = Nodes.mask(8, bits);
      var node = Nodes.withUsed(links, used);
      for (int count = 1; count <= 8; count++) {
        var expected = BruteForce.choose(links, used, count);
        var actual = strategy.choose(node, count).map(c -> java.util.Arrays.toString(c.gpus()));
        assertThat(actual)
            .as("%s used=%s count=%d", file, Integer.toBinaryString(bits), count)
            .isEqualTo(expected.map(java.util.Arrays::toString));
        checked++;
        if (expected.isEmpty()) {
          break;
        }
      }
    }
    assertThat(checked).isGreaterThan(256);
  }

  @Test
  void matchesExhaustiveSearchOnSixteenGpuBoards() {
    var boards = List.of(
        load("dgx2-v100-16gpu-nvswitch-partial.txt"),
        LinkMatrix.nvSwitch(16, 6, new int[] {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}),
        LinkMatrix.nvSwitch(16, 12, new int[] {0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2, 2, 3, 3}),
        Nodes.twoDgx1Boards());
    var random = new Random(42);
    for (var links : boards) {
      for (int round = 0; round < 60; round++) {
        var used = Nodes.mask(16, random.nextInt(1 << 16) & random.nextInt(1 << 16));
        var node = Nodes.withUsed(links, used);
        var free = 0;
        for (var u : used) {
          free += u ? 0 : 1;
        }
        for (int count = 1; count <= free; count++) {
          assertThat(strategy.choose(node, count).map(GpuChoice::gpus).orElseThrow())
              .containsExactly(BruteForce.choose(links, used, count).orElseThrow());
        }
      }
    }
  }

  @Test
  void searchesNvSwitchAndPcieOnlyBoardsByGroupAndIrregularBoardsExhaustively() {
    assertThat(GroupedSearch.applies(LinkMatrix.nvSwitch(16, 6, new int[16]))).isTrue();
    assertThat(GroupedSearch.applies(load("pcie-8gpu-rtx4090-all-sys.txt"))).isTrue();
    assertThat(GroupedSearch.applies(LinkMatrix.dgx1V100())).isFalse();
    assertThat(GroupedSearch.applies(load("synthetic-pcie-8gpu-pix-pxb.txt"))).isFalse();
  }

  @Test
  void servesSuccessivePairsOnIdleDgx1FromNvLink2PairsAsGoGpuAllocatorExpects() {
    var links = LinkMatrix.dgx1V100();
    var used = new boolean[8];
    var chosen = new ArrayList<String>();
    for (int i = 0; i < 4; i++) {
      var choice = strategy.choose(Nodes.withUsed(links, used), 2).orElseThrow().gpus();
      chosen.add(java.util.Arrays.toString(choice));
      for (var g : choice) {
        used[g] = true;
      }
    }
    assertThat(chosen).containsExactly("[0, 3]", "[1, 2]", "[4, 7]", "[5, 6]");
  }

  @Test
  void servesQuadsOnIdleDgx1AsTheTwoFullyConnectedQuads() {
    var links = LinkMatrix.dgx1V100();
    var first = strategy.choose(Nodes.withUsed(links, new boolean[8]), 4).orElseThrow().gpus();
    var used = new boolean[8];
    for (var g : first) {
      used[g] = true;
    }
    assertThat(first).containsExactly(0, 1, 2, 3);
    assertThat(strategy.choose(Nodes.withUsed(links, used), 4).orElseThrow().gpus()).containsExactly(4, 5, 6, 7);
  }

  @Test
  void parsedDgx1EqualsBuiltInTemplate() {
    assertThat(load("dgx1-v100-sxm2-8gpu-hybrid-cube-mesh.txt")).isEqualTo(LinkMatrix.dgx1V100());
  }

  @Test
  void picksBridgedPairOnPcieBoardWithNvLinkBridges() {
    var links = load("pcie-8gpu-nvlink-bridge-pairs.txt");
    assertThat(strategy.choose(Nodes.withUsed(links, new boolean[8]), 2).orElseThrow().gpus()).containsExactly(0, 2);
  }

  @Test
  void keepsPairsOnOneSocketWhereNvidiaSmiSaysSysEverywhere() {
    var links = load("pcie-8gpu-rtx4090-all-sys.txt");
    var used = Nodes.mask(8, 0b0000_0001);
    assertThat(strategy.choose(Nodes.withUsed(links, used), 3).orElseThrow().gpus()).containsExactly(1, 2, 3);
  }

  @Test
  void choosesWholeTraysInSeventyTwoGpuNvLinkDomain() {
    var numa = new int[72];
    for (int i = 0; i < 72; i++) {
      numa[i] = i / 2;
    }
    var links = LinkMatrix.nvSwitch(72, 18, numa);
    var used = new boolean[72];
    used[0] = true;
    used[5] = true;
    // Groups {0,1} and {4,5} are half used: a 4-GPU set takes two whole free groups, the first ones.
    assertThat(strategy.choose(Nodes.withUsed(links, used), 4).orElseThrow().gpus()).containsExactly(2, 3, 6, 7);
  }

  @Test
  void fallsBackToGreedySearchOnIrregularBoardsTooLargeToEnumerate() {
    // 40 GPUs as five DGX-1 meshes joined by SYS: C(40,20) sets, far past the exhaustive limit.
    var one = LinkMatrix.dgx1V100();
    var links = new Link[40][40];
    var numa = new int[40];
    for (int i = 0; i < 40; i++) {
      numa[i] = i / 4;
      for (int j = 0; j < 40; j++) {
        links[i][j] = i / 8 == j / 8 ? one.link(i % 8, j % 8) : new Link(0, PcieLevel.SYS);
      }
    }
    var board = LinkMatrix.of(links, numa);
    assertThat(GroupedSearch.applies(board)).isFalse();
    assertThat(TopologyAwareStrategy.combinations(40, 20)).isGreaterThan(TopologyAwareStrategy.EXHAUSTIVE_LIMIT);

    // The best pair first (an NV2 pair on one socket), then the GPUs adding most: a whole mesh.
    assertThat(strategy.choose(Nodes.withUsed(board, new boolean[40]), 8).orElseThrow().gpus())
        .containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
  }

  @Test
  void pcieOnlyTemplateKeepsSetsOnOneNumaNode() {
    var board = LinkMatrix.pcieOnly(new int[] {0, 0, 0, 0, 1, 1, 1, 1});
    var used = Nodes.mask(8, 0b0000_0011);

    assertThat(strategy.choose(Nodes.withUsed(board, used), 3).orElseThrow().gpus()).containsExactly(4, 5, 6);
    assertThat(board.link(0, 1)).hasToString("NODE");
    assertThat(board.link(0, 4)).hasToString("SYS");
  }

  @Test
  void returnsNothingWhenTooFewGpusAreFree() {
    assertThat(strategy.choose(Nodes.withUsed(LinkMatrix.dgx1V100(), Nodes.mask(8, 0b0111_1111)), 2)).isEmpty();
  }
}
