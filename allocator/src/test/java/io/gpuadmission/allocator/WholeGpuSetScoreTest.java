package io.gpuadmission.allocator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@link WholeGpuStrategy#setScore} is the score of the set {@code choose} picks, without the choice. */
class WholeGpuSetScoreTest {
  private static final List<WholeGpuStrategy> STRATEGIES = List.of(new TopologyAwareStrategy(), new FirstFitStrategy());

  @Test
  void equalsTheChosenSetsScoreOnEveryBusyPatternOfADgx1() {
    var links = LinkMatrix.dgx1V100();
    for (int bits = 0; bits < 1 << 8; bits++) {
      var linked = Nodes.withUsed(links, Nodes.mask(8, bits));
      var unlinked = NodeGpus.withoutCpu("plain", linked.gpus(), Optional.empty());
      for (var node : List.of(linked, unlinked)) {
        for (int count = -1; count <= 9; count++) {
          for (var strategy : STRATEGIES) {
            var chosen = count < 0 && strategy instanceof FirstFitStrategy ? Optional.<GpuChoice>empty() : strategy.choose(node, count);

            assertThat(strategy.setScore(node, count))
                .as("%s, busy %s, %d GPUs", strategy.getClass().getSimpleName(), Integer.toBinaryString(bits), count)
                .isEqualTo(chosen.map(GpuChoice::setScore).orElse(WholeGpuStrategy.NO_SET));
          }
        }
      }
    }
  }

  @Test
  void anUnhealthyGpuIsNotWhollyFree() {
    var gpus = List.of(new GpuDevice(0, "T4", 16, 0, true), new GpuDevice(1, "T4", 16, 0, false));
    var node = NodeGpus.withoutCpu("n", gpus, Optional.empty());

    assertThat(new FirstFitStrategy().setScore(node, 1)).isZero();
    assertThat(new FirstFitStrategy().setScore(node, 2)).isEqualTo(WholeGpuStrategy.NO_SET);
    assertThat(new TopologyAwareStrategy().setScore(node, 2)).isEqualTo(WholeGpuStrategy.NO_SET);
  }
}
