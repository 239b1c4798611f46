package io.gpuadmission.validation;

/**
 * A check that needs only the pod and the cluster caches; it runs on pods and on the pod
 * templates of workloads alike and reports into {@code result}.
 */
public interface PodRule {
  void check(PodSubject subject, ValidationResult result);
}
