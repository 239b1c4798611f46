package io.gpuadmission.validation;

import io.gpuadmission.pod.PodResources;
import java.math.BigDecimal;
import java.util.ArrayList;

/**
 * Warns of share-asking containers that gpushare's device plugin will not give the chosen GPU.
 * The kubelet asks the plugin once per container (init containers first) for that container's
 * {@code aliyun.com/gpu-mem}; the plugin finds the pending pod whose regular containers' limits add
 * up to exactly that amount, gives the container the GPU of {@code ALIYUN_COM_GPU_MEM_IDX} and
 * marks the pod {@code ASSIGNED}. So one container gets it: the first whose own amount is that
 * sum. Any other container asking a share (an init container, a sidecar, a second regular
 * container) gets no GPU on a node with more than one GPU (the plugin hands a one-GPU node's GPU
 * to anyone). gpu-admission still holds the pod's effective request; the pod is admitted.
 */
public final class GpushareContainersRule implements PodRule {
  @Override
  public void check(PodSubject s, ValidationResult result) {
    var share = s.policy().sharedMemory().resourceName();
    var spec = s.pod().getSpec();
    if (spec == null) {
      return;
    }
    var regularSum = BigDecimal.ZERO;
    if (spec.getContainers() != null) {
      for (var c : spec.getContainers()) {
        regularSum = regularSum.add(PodResources.amount(c, share));
      }
    }
    var initCount = spec.getInitContainers() == null ? 0 : spec.getInitContainers().size();
    var containers = PodResources.allContainers(s.pod());
    var matched = false;
    var without = new ArrayList<String>();
    for (int i = 0; i < containers.size(); i++) {
      var own = PodResources.amount(containers.get(i), share);
      if (own.signum() == 0) {
        continue;
      }
      if (!matched && regularSum.signum() > 0 && own.compareTo(regularSum) == 0) {
        matched = true;
      } else {
        without.add((i < initCount ? "init container \"" : "container \"") + containers.get(i).getName() + "\"");
      }
    }
    if (without.isEmpty()) {
      return;
    }
    var who = without.size() == 1 ? without.get(0) + " starts" : String.join(" and ", without) + " start";
    result.warn(
        "gpu-admission: " + s.prefix() + "gpushare's device plugin gives the GPU chosen for a pod to one container only, the first"
            + " (init containers first) whose " + share + " equals the sum over the pod's regular containers ("
            + regularSum.toPlainString() + "): on a node with more than one GPU, " + who + " without a GPU; ask " + share
            + " in one regular container only");
  }
}
