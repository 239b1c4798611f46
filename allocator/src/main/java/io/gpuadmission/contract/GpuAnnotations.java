package io.gpuadmission.contract;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The choice recorded on a pod at bind: ACK gpushare's annotations for a memory share (its device
 * plugin reads them to expose that GPU), ours for whole GPUs, and what the node agent records back
 * (the GPUs the kubelet gave). The server writes and reads them (placement/PodClaims rebuilds the
 * ledger from them: the pods are the source of truth); the node agent reads and writes them too, so
 * their keys and value formats live here, where both programs can use them.
 */
public final class GpuAnnotations {
  public static final String MEM_IDX = "ALIYUN_COM_GPU_MEM_IDX";
  public static final String MEM_POD = "ALIYUN_COM_GPU_MEM_POD";
  public static final String MEM_DEV = "ALIYUN_COM_GPU_MEM_DEV";
  public static final String MEM_ASSIGNED = "ALIYUN_COM_GPU_MEM_ASSIGNED";
  public static final String MEM_ASSUME_TIME = "ALIYUN_COM_GPU_MEM_ASSUME_TIME";
  public static final String GPU_INDICES = "gpu-admission.io/gpu-indices";
  /**
   * The whole GPUs the kubelet gave the pod's containers, written by the node agent: where present
   * it counts instead of {@link #GPU_INDICES}, which is only the extender's wish (the device plugin
   * chooses whole GPUs itself).
   */
  public static final String GPU_ALLOCATED = "gpu-admission.io/gpu-allocated";
  /**
   * {@code "true"} once the node agent's device plugin has handed every container of the pod its
   * part of bind's choice ({@link ContainerGpus}); the plugin's candidates are the pods without it.
   */
  public static final String GPU_ASSIGNED = "gpu-admission.io/gpu-assigned";

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

  /**
   * Where Alibaba's {@code arena top node} reads a topology pod's allocated GPUs (kubeflow/arena,
   * pkg/apis/types: GPUTopologyAllocationLabel, GPUTopologyVisibleGPULabel): comma-separated
   * indices, as ACK's topology scheduler writes them.
   */
  public static final String ACK_GPU_GROUP = "topology.kubernetes.io/gpu-group";
  public static final String ACK_GPU_VISIBLE = "topology.kubernetes.io/gpu-visible";

  public static Map<String, String> whole(List<Integer> gpus) {
    return Map.of(GPU_INDICES, join(gpus));
  }

  /** Our choice, and with {@code ack} also ACK's two topology annotations holding the same GPUs. */
  public static Map<String, String> whole(List<Integer> gpus, boolean ack) {
    var indices = join(gpus);
    return ack ? Map.of(GPU_INDICES, indices, ACK_GPU_GROUP, indices, ACK_GPU_VISIBLE, indices) : Map.of(GPU_INDICES, indices);
  }

  /**
   * The whole GPUs a pod holds by its annotations: what the node gave ({@link #GPU_ALLOCATED}) once
   * its agent has said, until then the extender's choice ({@link #GPU_INDICES}); a node without the
   * agent keeps the choice. Throws NumberFormatException on an unreadable value.
   */
  public static Optional<List<Integer>> wholeGpus(Map<String, String> annotations) {
    var allocated = annotations.get(GPU_ALLOCATED);
    if (allocated != null) {
      return Optional.of(parse(allocated));
    }
    var chosen = annotations.get(GPU_INDICES);
    return chosen == null ? Optional.empty() : Optional.of(parse(chosen));
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
