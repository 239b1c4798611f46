package io.gpuadmission.pod;

import io.fabric8.kubernetes.api.model.Pod;

/**
 * Identifies a gang: namespace and {@code gpu-topology} value. Arena writes {@code "true"} for
 * every job, so there the controller's name tells gangs apart.
 */
public record GangKey(String namespace, String label, String arenaOwner) {

  public static GangKey of(String namespace, Pod pod, TopologyJob job) {
    var owner = job.arenaStyle() ? Owner.controllerOf(pod).map(Owner::name).orElse(job.displayName()) : "";
    return new GangKey(namespace, job.label(), owner);
  }

  /** Index key for informer lookups (namespace and label only). */
  public String indexKey() {
    return namespace + "/" + label;
  }

  public String displayName() {
    return arenaOwner.isEmpty() ? label : arenaOwner;
  }
}
