package io.gpuadmission.quota;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WaterFillTest {
  @Test
  void sharesInProportionToWeight() {
    assertThat(WaterFill.share(30, List.of(new WaterFill.Claim("a", 40, 100), new WaterFill.Claim("b", 20, 100))))
        .isEqualTo(Map.of("a", 20L, "b", 10L));
  }

  @Test
  void givesWhatACappedClaimantCannotTakeToTheOthers() {
    assertThat(WaterFill.share(30, List.of(
            new WaterFill.Claim("a", 40, 5), new WaterFill.Claim("b", 20, 100), new WaterFill.Claim("c", 20, 100))))
        .isEqualTo(Map.of("a", 5L, "b", 13L, "c", 12L));
  }

  @Test
  void sharesEquallyWhenNoClaimantHasWeight() {
    assertThat(WaterFill.share(5, List.of(new WaterFill.Claim("a", 0, 100), new WaterFill.Claim("b", 0, 100))))
        .isEqualTo(Map.of("a", 3L, "b", 2L));
  }

  @Test
  void leavesClaimantWithoutWeightOutWhenOthersHaveWeight() {
    assertThat(WaterFill.share(6, List.of(new WaterFill.Claim("a", 0, 100), new WaterFill.Claim("b", 2, 100))))
        .isEqualTo(Map.of("a", 0L, "b", 6L));
  }

  @Test
  void leavesWhatEveryCapRefusesUnshared() {
    assertThat(WaterFill.share(50, List.of(new WaterFill.Claim("a", 1, 4), new WaterFill.Claim("b", 3, 6))))
        .isEqualTo(Map.of("a", 4L, "b", 6L));
  }
}
