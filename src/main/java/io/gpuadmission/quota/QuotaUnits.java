package io.gpuadmission.quota;

import java.math.BigDecimal;

/** Canonical units of quota amounts, and their Kubernetes quantity form. */
final class QuotaUnits {
  static final String CPU = "cpu";
  static final String MEMORY = "memory";
  static final String GPU_MEMORY = "aliyun.com/gpu-mem";
  private static final String[] BINARY = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};

  private QuotaUnits() {}

  static long canonical(String resource, BigDecimal quantity) {
    var scaled = CPU.equals(resource) ? quantity.movePointRight(3) : quantity;
    if (scaled.signum() < 0) {
      throw new IllegalArgumentException(resource + " has a negative amount " + quantity.toPlainString());
    }
    var whole = QuotaResources.ceil(scaled);
    return whole.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0 ? Long.MAX_VALUE : whole.longValueExact();
  }

  static String format(String resource, long amount) {
    if (CPU.equals(resource)) {
      return amount % 1000 == 0 ? Long.toString(amount / 1000) : amount + "m";
    }
    if (MEMORY.equals(resource) && amount != 0) {
      for (var i = 0; i < BINARY.length; i++) {
        var unit = 1L << (10 * (BINARY.length - i));
        if (amount % unit == 0) {
          return amount / unit + BINARY[i];
        }
      }
    }
    return Long.toString(amount);
  }
}
