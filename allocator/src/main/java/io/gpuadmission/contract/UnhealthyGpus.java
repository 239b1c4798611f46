package io.gpuadmission.contract;

import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * A node's unhealthy GPUs as an operator or a health checker records them: ConfigMap {@code
 * kube-system/unhealthy-gpu-<node>}, key {@code gpus}, comma-separated indices. The server's ledger
 * gives them nothing (cluster/GpuCapacityMapper); the node agent's device plugin reports them
 * unhealthy to the kubelet (node/NodeUnhealthyGpus). The format lives here, where both can use it.
 */
public final class UnhealthyGpus {
  public static final String NAMESPACE = "kube-system";
  public static final String PREFIX = "unhealthy-gpu-";
  public static final String KEY = "gpus";

  private UnhealthyGpus() {}

  /** The ConfigMap's name for {@code node}. */
  public static String configMapName(String node) {
    return PREFIX + node;
  }

  /** The node a ConfigMap of this name speaks of, if it is one. */
  public static Optional<String> nodeOf(String configMapName) {
    return configMapName.startsWith(PREFIX) ? Optional.of(configMapName.substring(PREFIX.length())) : Optional.empty();
  }

  /** Key {@code gpus}: comma-separated indices; anything unreadable in it is skipped. */
  public static Set<Integer> gpus(String text) {
    var out = new TreeSet<Integer>();
    if (text != null) {
      for (var part : text.split(",")) {
        try {
          out.add(Integer.parseInt(part.trim()));
        } catch (NumberFormatException notAnIndex) {
          // An empty entry ("1,") or a typo must not hide the indices that are readable.
        }
      }
    }
    return out;
  }
}
