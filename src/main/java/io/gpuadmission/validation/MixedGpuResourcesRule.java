package io.gpuadmission.validation;

import io.gpuadmission.pod.PodResources;

/** A container gets whole GPUs or a share of one GPU's memory, never both. */
public final class MixedGpuResourcesRule implements PodRule {
  static final String NAME = "mixed-gpu-resources";

  @Override
  public void check(PodSubject s, ValidationResult result) {
    var topology = s.policy().topology();
    var share = s.policy().sharedMemory().resourceName();
    for (var container : PodResources.allContainers(s.pod())) {
      var r = container.getResources();
      if (r == null) {
        continue;
      }
      var names = new java.util.HashSet<String>();
      if (r.getLimits() != null) {
        names.addAll(r.getLimits().keySet());
      }
      if (r.getRequests() != null) {
        names.addAll(r.getRequests().keySet());
      }
      var whole = names.contains(topology.resourceName()) ? topology.resourceName()
          : names.contains(topology.wholeGpuResource()) ? topology.wholeGpuResource() : null;
      if (whole != null && names.contains(share)) {
        result.refuse(
            NAME,
            "spec.containers[" + container.getName() + "].resources",
            s.prefix() + "container \"" + container.getName() + "\" asks both " + whole + " and " + share
                + "; a container gets whole GPUs or a share of one GPU's memory, not both: remove one of them");
      }
    }
  }
}
