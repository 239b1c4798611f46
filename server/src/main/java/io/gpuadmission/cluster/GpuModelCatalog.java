package io.gpuadmission.cluster;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The GPU models the cluster has and the smallest per-GPU memory (MiB) reported for each, so that
 * "at least 16Gi" holds on every node of a model it names.
 */
public record GpuModelCatalog(Map<String, Long> smallestMemoryMiB) {
  public static final GpuModelCatalog EMPTY = new GpuModelCatalog(Map.of());

  public GpuModelCatalog {
    smallestMemoryMiB = java.util.Collections.unmodifiableMap(new TreeMap<>(smallestMemoryMiB));
  }

  public static GpuModelCatalog of(Collection<GpuNode> nodes) {
    var smallest = new TreeMap<String, Long>();
    for (var node : nodes) {
      if (node.model().isPresent() && node.memoryMiB().isPresent()) {
        smallest.merge(node.model().get(), node.memoryMiB().getAsLong(), Math::min);
      }
    }
    return new GpuModelCatalog(smallest);
  }

  /**
   * A minimum GPU memory as the annotation {@code gpu-admission.io/min-gpu-memory} writes it
   * ({@code 16Gi}), in MiB rounded up; empty when it is not a quantity.
   */
  public static java.util.OptionalLong minimumMiB(String quantity) {
    try {
      var bytes = io.fabric8.kubernetes.api.model.Quantity.getAmountInBytes(new io.fabric8.kubernetes.api.model.Quantity(quantity));
      return java.util.OptionalLong.of(bytes.divide(java.math.BigDecimal.valueOf(1024L * 1024L), 0, java.math.RoundingMode.CEILING).longValueExact());
    } catch (IllegalArgumentException | ArithmeticException notAQuantity) {
      return java.util.OptionalLong.empty();
    }
  }

  /** The model with the most memory per GPU (its smallest node's), if any. */
  public java.util.Optional<Map.Entry<String, Long>> largest() {
    return smallestMemoryMiB.entrySet().stream().max(Map.Entry.comparingByValue());
  }

  public boolean isEmpty() {
    return smallestMemoryMiB.isEmpty();
  }

  /** The memory per GPU (MiB) of {@code model}'s smallest node; empty when no node has the model. */
  public java.util.OptionalLong memoryMiB(String model) {
    var memory = smallestMemoryMiB.get(model);
    return memory == null ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(memory);
  }

  /** Whether {@code memoryMiB} counts as at least {@code minimumMiB}, as {@link #modelsWithAtLeast} counts it. */
  public static boolean atLeast(long memoryMiB, long minimumMiB, int tolerancePercent) {
    return memoryMiB >= minimumMiB - minimumMiB * tolerancePercent / 100;
  }

  /**
   * Models whose memory is at least {@code minimumMiB} less {@code tolerancePercent} percent (GPUs
   * report a little less than the size they are sold as), sorted by name.
   */
  public List<String> modelsWithAtLeast(long minimumMiB, int tolerancePercent) {
    return smallestMemoryMiB.entrySet().stream()
        .filter(e -> atLeast(e.getValue(), minimumMiB, tolerancePercent))
        .map(Map.Entry::getKey)
        .toList();
  }
}
