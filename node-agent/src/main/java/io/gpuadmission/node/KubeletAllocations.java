package io.gpuadmission.node;

import io.gpuadmission.node.podresources.v1.ListPodResourcesResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a kubelet's List answer says each pod holds of the whole-GPU resources: the GPUs of every
 * container it lists (regular containers and restartable init containers; a plain init
 * container's devices are not listed, and are those its pod's containers reuse). Pods without
 * such devices are left out.
 */
public final class KubeletAllocations {
  private KubeletAllocations() {}

  /** By {@code namespace/name}. */
  public static Map<String, PodGpus> of(ListPodResourcesResponse answer, Set<String> resources, DeviceIndex index) {
    var out = new LinkedHashMap<String, PodGpus>();
    for (var pod : answer.getPodResourcesList()) {
      var gpus = new TreeSet<Integer>();
      var unmapped = new ArrayList<String>();
      var any = false;
      for (var container : pod.getContainersList()) {
        for (var devices : container.getDevicesList()) {
          if (!resources.contains(devices.getResourceName())) {
            continue;
          }
          for (var id : devices.getDeviceIdsList()) {
            any = true;
            var gpu = index.indexOf(id);
            if (gpu.isPresent()) {
              gpus.add(gpu.getAsInt());
            } else {
              unmapped.add(id);
            }
          }
        }
      }
      if (any) {
        var found = new PodGpus(pod.getNamespace(), pod.getName(), new ArrayList<>(gpus), unmapped);
        out.put(found.key(), found);
      }
    }
    return out;
  }
}
