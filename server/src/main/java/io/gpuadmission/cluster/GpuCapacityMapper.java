package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.contract.UnhealthyGpus;
import io.gpuadmission.placement.GpuNodeCapacity;
import io.gpuadmission.policy.NodeLabels;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Node and ConfigMap to the ledger's records. A node's per-GPU memory (GiB) comes from, in order:
 * annotation {@code gpu-admission.io/gpu-memory} ({@code "16,16,32,32"}: one size per GPU, for
 * nodes whose GPUs differ), the per-GPU memory label ({@code aliyun.accelerator/nvidia_mem},
 * rounded down to GiB as gpushare's device plugin does), and last {@code status.allocatable
 * aliyun.com/gpu-mem} divided by the GPU count (gpushare's own reading, wrong on mixed nodes). The
 * node's allocatable CPU comes along: FGD counts what GPU pods leave of it.
 */
public final class GpuCapacityMapper {
  public static final String MEMORY_ANNOTATION = "gpu-admission.io/gpu-memory";
  static final String SHARE_ALLOCATABLE = "aliyun.com/gpu-mem";

  private GpuCapacityMapper() {}

  /** The node's GPUs; empty for a node without any. */
  public static Optional<GpuNodeCapacity> map(Node node, NodeLabels keys) {
    var gpuNode = GpuNodeMapper.map(node, keys);
    var count = (int) Math.max(gpuNode.gpuCount(), allocatable(node, "aliyun.com/gpu-count"));
    var labels = node.getMetadata().getLabels() == null ? Map.<String, String>of() : node.getMetadata().getLabels();
    var annotations = node.getMetadata().getAnnotations() == null ? Map.<String, String>of() : node.getMetadata().getAnnotations();
    var perGpu = perGpuMemory(annotations.get(MEMORY_ANNOTATION));
    if (perGpu.isEmpty() && count > 0) {
      var each = gpuNode.memoryMiB().isPresent() ? gpuNode.memoryMiB().getAsLong() / 1024 : allocatable(node, SHARE_ALLOCATABLE) / count;
      perGpu = Collections.nCopies(count, each);
    }
    if (perGpu.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        new GpuNodeCapacity(
            node.getMetadata().getName(),
            gpuNode.model().orElse(""),
            perGpu,
            Optional.ofNullable(labels.get(keys.placement())),
            allocatableCpuMilli(node)));
  }

  /** The node an {@code unhealthy-gpu-<node>} ConfigMap speaks of, if it is one. */
  public static Optional<String> unhealthyNode(ConfigMap map) {
    return UnhealthyGpus.nodeOf(map.getMetadata().getName());
  }

  /** Key {@code gpus}: comma-separated indices; anything unreadable in it is skipped. */
  public static Set<Integer> unhealthyGpus(ConfigMap map) {
    return UnhealthyGpus.gpus(map.getData() == null ? null : map.getData().get(UnhealthyGpus.KEY));
  }


  private static List<Long> perGpuMemory(String text) {
    var out = new ArrayList<Long>();
    if (text == null) {
      return out;
    }
    for (var part : text.split(",")) {
      var mib = GpuNodeMapper.parseMemoryMiB(part.trim().matches("\\d+") ? part.trim() + "GiB" : part.trim());
      if (mib.isEmpty()) {
        return List.of();
      }
      out.add(mib.getAsLong() / 1024);
    }
    return out;
  }

  /** {@code status.allocatable.cpu} in millicores; unknown (not counted) when absent or unreadable. */
  static long allocatableCpuMilli(Node node) {
    var cpu = node.getStatus() == null || node.getStatus().getAllocatable() == null ? null : node.getStatus().getAllocatable().get("cpu");
    if (cpu == null) {
      return Long.MAX_VALUE;
    }
    try {
      return io.gpuadmission.pod.QuantitySyntax.amount(cpu).multiply(java.math.BigDecimal.valueOf(1000)).setScale(0, java.math.RoundingMode.FLOOR).longValueExact();
    } catch (ArithmeticException | IllegalArgumentException unreadable) {
      return Long.MAX_VALUE;
    }
  }

  private static long allocatable(Node node, String resource) {
    if (node.getStatus() == null || node.getStatus().getAllocatable() == null) {
      return 0;
    }
    Quantity q = node.getStatus().getAllocatable().get(resource);
    return q == null ? 0 : io.gpuadmission.pod.QuantitySyntax.amount(q).longValue();
  }
}
