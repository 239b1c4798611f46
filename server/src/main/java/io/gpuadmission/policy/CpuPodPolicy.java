package io.gpuadmission.policy;

import java.util.List;

/**
 * Whether pods that ask for no GPU are kept off GPU nodes, and which owners are left alone (pods
 * of a DaemonSet are always left alone: they must run on every node).
 */
public record CpuPodPolicy(boolean keepOffGpuNodes, List<String> exemptOwnerKinds) {

  public CpuPodPolicy {
    exemptOwnerKinds = List.copyOf(exemptOwnerKinds);
  }

  public boolean isExemptOwner(String kind) {
    return "DaemonSet".equals(kind) || exemptOwnerKinds.contains(kind);
  }
}
