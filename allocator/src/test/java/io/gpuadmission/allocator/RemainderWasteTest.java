package io.gpuadmission.allocator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class RemainderWasteTest {
  // Half the tasks ask 810, half 320: a mean take of 565, so a remainder is offered 6 × 1000 / 565
  // = 10.6 tasks' worth, and one that a kind fits (probability 0.5) is filled for sure.
  private final RemainderWaste waste = new RemainderWaste(TaskDistribution.of(List.of(Task.share(1000, 810), Task.share(1000, 320))));

  @Test
  void aRemainderNothingFitsIsWastedWhole() {
    assertThat(waste.growth(1000, 0, 190)).isEqualTo(190.0);
    assertThat(waste.growth(1000, 0, 319)).isEqualTo(319.0);
  }

  @Test
  void aRemainderCommonSharesFitIsWorthWhatTheyLeave() {
    // 680 → 360 → 40 with 320s; 360 → 40.
    assertThat(waste.growth(1000, 0, 680)).isEqualTo(40.0);
    assertThat(waste.growth(1000, 0, 360)).isEqualTo(40.0);
    // An empty GPU goes to an 810 (190 left) or a 320 (40 in the end), each half the time.
    assertThat(waste.growth(1000, 0, 1000)).isEqualTo(115.0);
    // So a 320 opening an empty GPU lowers its expected waste, an 810 raises it.
    assertThat(waste.growth(1000, 1000, 680)).isEqualTo(-75.0);
    assertThat(waste.growth(1000, 1000, 190)).isEqualTo(75.0);
  }

  @Test
  void aRareKindFillsARemainderOnlyAsOftenAsItIsOffered() {
    // 1 % of the tasks ask 100: a 190 is offered 6 × 1000 / 804.4 × 0.01 = 7.5 % of a fill.
    var rare = new RemainderWaste(TaskDistribution.weighted(java.util.Map.of(Task.share(1000, 810), 99, Task.share(1000, 100), 1)));
    var filled = 6 * 1000 / (0.99 * 810 + 0.01 * 100) * 0.01;

    assertThat(rare.growth(1000, 0, 190)).isCloseTo((1 - filled) * 190 + filled * 90, within(1e-9));
  }

  @Test
  void aGpuCountedInMibIsCutIntoBuckets() {
    // 16,384 MiB in buckets of 17: the same shape of waste, within a bucket.
    var mib = new RemainderWaste(TaskDistribution.of(List.of(Task.share(1000, 13_271), Task.share(1000, 5_243))));

    assertThat(mib.growth(16_384, 0, 16_384)).isCloseTo(115.0 * 16.384, within(40.0));
  }
}
