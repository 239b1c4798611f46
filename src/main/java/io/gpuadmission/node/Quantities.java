package io.gpuadmission.node;

import java.math.BigDecimal;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/** A Kubernetes resource quantity ({@code 2}, {@code 500m}, {@code 1Ki}, {@code 1e3}) as a number, for the agent's pods. */
final class Quantities {
  private static final Pattern QUANTITY = Pattern.compile("([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?");
  private static final Map<String, BigDecimal> SUFFIXES = Map.ofEntries(
      Map.entry("Ki", BigDecimal.valueOf(1L << 10)), Map.entry("Mi", BigDecimal.valueOf(1L << 20)),
      Map.entry("Gi", BigDecimal.valueOf(1L << 30)), Map.entry("Ti", BigDecimal.valueOf(1L << 40)),
      Map.entry("Pi", BigDecimal.valueOf(1L << 50)), Map.entry("Ei", BigDecimal.valueOf(1L << 60)),
      Map.entry("n", new BigDecimal("1e-9")), Map.entry("u", new BigDecimal("1e-6")), Map.entry("m", new BigDecimal("1e-3")),
      Map.entry("k", new BigDecimal("1e3")), Map.entry("M", new BigDecimal("1e6")), Map.entry("G", new BigDecimal("1e9")),
      Map.entry("T", new BigDecimal("1e12")), Map.entry("P", new BigDecimal("1e15")), Map.entry("E", new BigDecimal("1e18")));

  private Quantities() {}

  /** The amount; empty for text that is not a quantity (the API server admits none, but the agent must not fail on one). */
  static Optional<BigDecimal> parse(String text) {
    var matcher = QUANTITY.matcher(text.strip());
    if (!matcher.matches()) {
      return Optional.empty();
    }
    try {
      var number = new BigDecimal(matcher.group(1));
      var suffix = matcher.group(2);
      return Optional.of(suffix == null ? number : number.multiply(SUFFIXES.get(suffix)));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }
}
