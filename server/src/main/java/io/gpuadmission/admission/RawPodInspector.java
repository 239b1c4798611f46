package io.gpuadmission.admission;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.policy.GpuPolicy;

/**
 * Tells from the raw JSON whether a pod asks for a GPU. Used when the pod could not be judged
 * (it may not even map to a typed Pod), to pick the failure mode.
 */
final class RawPodInspector {
  private RawPodInspector() {}

  static boolean asksForGpu(JsonNode pod, GpuPolicy policy) {
    if (pod == null) {
      return false;
    }
    var spec = pod.path("spec");
    return anyAsksForGpu(spec.path("containers"), policy) || anyAsksForGpu(spec.path("initContainers"), policy);
  }

  private static boolean anyAsksForGpu(JsonNode containers, GpuPolicy policy) {
    for (var container : containers) {
      var resources = container.path("resources");
      for (var field : new String[] {"limits", "requests"}) {
        var names = resources.path(field).fieldNames();
        while (names.hasNext()) {
          if (policy.isGpuResource(names.next())) {
            return true;
          }
        }
      }
    }
    return false;
  }
}
