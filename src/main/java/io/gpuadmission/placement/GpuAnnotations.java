package io.gpuadmission.placement;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.pod.CpuRequest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The choice recorded on a pod at bind: ACK gpushare's annotations for a memory share (its device
 * plugin reads them to expose that GPU), ours for whole GPUs. Reading them back is how the ledger
 * is rebuilt: the pods are the source of truth.
 */
public final class GpuAnnotations {
  public static final String MEM_IDX = "ALIYUN_COM_GPU_MEM_IDX";
  public static final String MEM_POD = "ALIYUN_COM_GPU_MEM_POD";
  public static final String MEM_DEV = "ALIYUN_COM_GPU_MEM_DEV";
  public static final String MEM_ASSIGNED = "ALIYUN_COM_GPU_MEM_ASSIGNED";
  public static final String MEM_ASSUME_TIME = "ALIYUN_COM_GPU_MEM_ASSUME_TIME";
  public static final String GPU_INDICES = "gpu-admission.io/gpu-indices";

  private GpuAnnotations() {}

  /** gpushare's five annotations; {@code assumed} is written in Unix nanoseconds. */
  public static Map<String, String> share(int gpu, long podMemory, long gpuMemory, Instant assumed) {
    var out = new LinkedHashMap<String, String>();
    out.put(MEM_IDX, Integer.toString(gpu));
    out.put(MEM_POD, Long.toString(podMemory));
    out.put(MEM_DEV, Long.toString(gpuMemory));
    out.put(MEM_ASSIGNED, "false");
    out.put(MEM_ASSUME_TIME, Long.toString(assumed.getEpochSecond() * 1_000_000_000L + assumed.getNano()));
    return out;
  }

  public static Map<String, String> whole(List<Integer> gpus) {
    return Map.of(GPU_INDICES, join(gpus));
  }

  /**
   * The claim a bound, running pod holds, from its annotations; empty for a pod that is not bound,
   * has finished (Succeeded and Failed pods free their GPUs), or carries no readable choice.
   */
  public static Optional<GpuClaim> claimOf(Pod pod) {
    var node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
    var annotations = pod.getMetadata().getAnnotations();
    if (node == null || node.isEmpty() || annotations == null || finished(pod)) {
      return Optional.empty();
    }
    var key = pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    var uid = pod.getMetadata().getUid();
    try {
      if (annotations.get(MEM_IDX) != null && annotations.get(MEM_POD) != null) {
        var gpu = Integer.parseInt(annotations.get(MEM_IDX).trim());
        var memory = Long.parseLong(annotations.get(MEM_POD).trim());
        return memory > 0 ? Optional.of(GpuClaim.bound(uid, key, node, List.of(gpu), memory, cpu(pod))) : Optional.empty();
      }
      if (annotations.get(GPU_INDICES) != null) {
        return Optional.of(GpuClaim.bound(uid, key, node, parse(annotations.get(GPU_INDICES)), 0, cpu(pod)));
      }
    } catch (NumberFormatException unreadable) {
      return Optional.empty();
    }
    return Optional.empty();
  }

  /** The pod's CPU request; 0 if unreadable, which must never cost the ledger the pod's GPUs. */
  private static long cpu(Pod pod) {
    try {
      return CpuRequest.milli(pod);
    } catch (ArithmeticException | IllegalArgumentException unreadable) {
      return 0;
    }
  }

  public static boolean finished(Pod pod) {
    var phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    return "Succeeded".equals(phase) || "Failed".equals(phase);
  }

  public static String join(List<Integer> gpus) {
    var text = new StringBuilder();
    for (var g : gpus) {
      text.append(text.isEmpty() ? "" : ",").append(g);
    }
    return text.toString();
  }

  /** Parses {@code "0,3"}; throws NumberFormatException on anything else. */
  public static List<Integer> parse(String text) {
    var out = new ArrayList<Integer>();
    for (var part : text.split(",")) {
      if (!part.isBlank()) {
        out.add(Integer.parseInt(part.trim()));
      }
    }
    return out;
  }
}
