package io.gpuadmission.validation;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.cluster.ClusterView;
import io.gpuadmission.policy.GpuPolicy;

/**
 * A pod to judge, as it will be after mutation, with the request's namespace, one policy snapshot,
 * the cluster view, and how to call it in messages ("pod", or "Worker" for a job template).
 */
public record PodSubject(Pod pod, String namespace, GpuPolicy policy, ClusterView cluster, String called) {

  /** Prefix for a message about this subject: empty for a pod, "Worker: " for a template. */
  String prefix() {
    return called.equals("pod") ? "" : called + ": ";
  }
}
