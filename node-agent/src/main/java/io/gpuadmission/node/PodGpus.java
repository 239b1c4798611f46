package io.gpuadmission.node;

import java.util.List;

/**
 * The whole GPUs the kubelet reports for one pod, by the allocator's index (sorted, each once),
 * over its containers and restartable init containers; {@code unmapped}: device IDs of those
 * resources that have no index (said once by the caller, and left out).
 */
public record PodGpus(String namespace, String name, List<Integer> gpus, List<String> unmapped) {
  public PodGpus {
    gpus = List.copyOf(gpus);
    unmapped = List.copyOf(unmapped);
  }

  public String key() {
    return namespace + "/" + name;
  }
}
