package io.gpuadmission.bench;

import io.gpuadmission.kubescheduler.KubeSchedulerModel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * ACK's gpushare scheduler extender (AliyunContainerService/gpushare-scheduler-extender), the peer
 * users would keep, as kube-scheduler calls it: filter passes a node when one healthy GPU has the
 * pod's {@code aliyun.com/gpu-mem} free; it has no prioritize (kube-scheduler's own scorers pick
 * the node); bind takes the GPU with the least free memory that still fits, the lowest index
 * among equals. It counts only the memory shares it placed.
 */
final class GpushareModel implements KubeSchedulerModel.Extender {
  static final String RESOURCE = "aliyun.com/gpu-mem";

  private final Map<String, long[]> free = new HashMap<>();

  GpushareModel(Map<String, long[]> capacity) {
    capacity.forEach((node, gpus) -> free.put(node, gpus.clone()));
  }

  @Override
  public List<String> filter(KubeSchedulerModel.Pod pod, List<String> nodes) {
    var ask = pod.scalars().getOrDefault(RESOURCE, 0L);
    var passed = new ArrayList<String>(nodes.size());
    for (var node : nodes) {
      if (gpu(node, ask) >= 0) {
        passed.add(node);
      }
    }
    return passed;
  }

  @Override
  public Map<String, Integer> prioritize(KubeSchedulerModel.Pod pod, List<String> nodes) {
    return Map.of();
  }

  @Override
  public String bind(KubeSchedulerModel.Pod pod, String node) {
    var ask = pod.scalars().getOrDefault(RESOURCE, 0L);
    var gpu = gpu(node, ask);
    if (gpu < 0) {
      return "no GPU of " + node + " has " + ask + " free";
    }
    free.get(node)[gpu] -= ask;
    return "";
  }

  /** The fullest GPU of {@code node} with {@code ask} free, lowest index on ties; -1 when none. */
  private int gpu(String node, long ask) {
    var gpus = free.get(node);
    var chosen = -1;
    for (int g = 0; gpus != null && g < gpus.length; g++) {
      if (gpus[g] >= ask && (chosen < 0 || gpus[g] < gpus[chosen])) {
        chosen = g;
      }
    }
    return chosen;
  }
}
