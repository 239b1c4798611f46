package io.gpuadmission.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.Map;
import org.junit.jupiter.api.Test;

class QuotaResourcesTest {
  @Test
  void readsQuantitiesInCanonicalUnits() {
    assertThat(QuotaResources.canonical("cpu", new BigDecimal("0.5"))).isEqualTo(500);
    assertThat(QuotaResources.canonical("cpu", new BigDecimal("0.0001"))).isEqualTo(1);
    assertThat(QuotaResources.canonical("memory", new BigDecimal(16L << 30))).isEqualTo(16L << 30);
    assertThat(QuotaResources.canonical("aliyun.com/gpu-mem", new BigDecimal("8"))).isEqualTo(8);
    assertThat(QuotaResources.canonical("nvidia.com/gpu", new BigDecimal("1.5"))).isEqualTo(2);
    assertThatThrownBy(() -> QuotaResources.canonical("nvidia.com/gpu", new BigDecimal("-1")))
        .hasMessage("nvidia.com/gpu has a negative amount -1");
  }

  @Test
  void writesAmountsAsKubernetesQuantities() {
    assertThat(QuotaResources.of(Map.of("cpu", 1500L, "memory", 3L << 29, "nvidia.com/gpu", 4L, "aliyun.com/gpu-mem", 16L)))
        .hasToString("aliyun.com/gpu-mem=16, cpu=1500m, memory=1536Mi, nvidia.com/gpu=4");
    assertThat(QuotaResources.format("memory", 1000)).isEqualTo("1000");
    assertThat(QuotaResources.format("cpu", 2000)).isEqualTo("2");
  }

  @Test
  void addsSubtractsAndCompares() {
    var a = QuotaResources.of("nvidia.com/gpu", 4, "cpu", 1000);
    var b = QuotaResources.of("nvidia.com/gpu", 6);
    assertThat(a.add(b)).isEqualTo(QuotaResources.of("nvidia.com/gpu", 10, "cpu", 1000));
    assertThat(a.subtract(b)).isEqualTo(QuotaResources.of("nvidia.com/gpu", 0, "cpu", 1000));
    assertThat(a.fitsWithin(b)).isFalse();
    assertThat(QuotaResources.of("nvidia.com/gpu", 4).fitsWithin(b)).isTrue();
    assertThat(a.withinLimits(b)).isTrue();
    assertThat(a.withinLimits(QuotaResources.of("cpu", 999))).isFalse();
  }
}
