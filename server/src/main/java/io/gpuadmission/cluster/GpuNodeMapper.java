package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.policy.NodeLabels;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * Turns a Kubernetes Node into a {@link GpuNode}: the ACK labels named by the policy first, then
 * NVIDIA GPU feature discovery's labels for clusters that follow the portable convention.
 */
public final class GpuNodeMapper {
  static final String GFD_PRODUCT = "nvidia.com/gpu.product";
  static final String GFD_MEMORY = "nvidia.com/gpu.memory";
  static final String GFD_COUNT = "nvidia.com/gpu.count";
  private static final Pattern MEMORY = Pattern.compile("(\\d+)\\s*(MiB|Mi|GiB|Gi|MB|GB)?");

  private GpuNodeMapper() {}

  public static GpuNode map(Node node, NodeLabels keys) {
    var labels = node.getMetadata().getLabels() == null ? Map.<String, String>of() : node.getMetadata().getLabels();
    var model = Optional.ofNullable(labels.getOrDefault(keys.model(), labels.get(GFD_PRODUCT)));
    var memory = parseMemoryMiB(labels.getOrDefault(keys.memory(), labels.get(GFD_MEMORY)));
    var count = parseCount(labels.getOrDefault(keys.count(), labels.get(GFD_COUNT)));
    if (count == 0) {
      count = capacityCount(node);
    }
    return new GpuNode(
        node.getMetadata().getName(),
        model,
        memory,
        count,
        Optional.ofNullable(labels.get(keys.pool())),
        Optional.ofNullable(labels.get(keys.placement())),
        allocatable(node));
  }

  /** The extended resources of {@code status.allocatable} (device plugins' resources), rounded down to whole units. */
  private static Map<String, Long> allocatable(Node node) {
    if (node.getStatus() == null || node.getStatus().getAllocatable() == null) {
      return Map.of();
    }
    var out = new java.util.HashMap<String, Long>();
    node.getStatus().getAllocatable().forEach((name, quantity) -> {
      if (name.indexOf('/') > 0 && !name.startsWith("hugepages-") && quantity != null) {
        try {
          out.put(name, io.gpuadmission.pod.QuantitySyntax.amount(quantity).setScale(0, java.math.RoundingMode.FLOOR).longValue());
        } catch (ArithmeticException | IllegalArgumentException notANumber) {
          // A quantity the kubelet never writes: the resource stays not known.
        }
      }
    });
    return out;
  }

  /** Reads {@code 12209MiB} (ACK), {@code 16160} (GFD: MiB) or {@code 16GiB}. */
  public static OptionalLong parseMemoryMiB(String text) {
    if (text == null) {
      return OptionalLong.empty();
    }
    var m = MEMORY.matcher(text.trim());
    if (!m.matches()) {
      return OptionalLong.empty();
    }
    var value = Long.parseLong(m.group(1));
    var unit = m.group(2) == null ? "MiB" : m.group(2);
    return OptionalLong.of(
        switch (unit) {
          case "GiB", "Gi" -> value * 1024;
          case "GB" -> value * 1_000_000_000L / (1024 * 1024);
          case "MB" -> value * 1_000_000L / (1024 * 1024);
          default -> value;
        });
  }

  private static int parseCount(String text) {
    if (text == null) {
      return 0;
    }
    try {
      return Math.max(0, Integer.parseInt(text.trim()));
    } catch (NumberFormatException notACount) {
      return 0;
    }
  }

  private static int capacityCount(Node node) {
    if (node.getStatus() == null || node.getStatus().getCapacity() == null) {
      return 0;
    }
    var capacity = node.getStatus().getCapacity();
    for (var resource : new String[] {"nvidia.com/gpu", "aliyun.com/gpu", "aliyun.com/gpu-count"}) {
      Quantity q = capacity.get(resource);
      if (q != null) {
        return io.gpuadmission.pod.QuantitySyntax.amount(q).intValue();
      }
    }
    return 0;
  }
}
