package io.gpuadmission.mutation;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.pod.PodResources;

/**
 * Sends a GPU pod to the scheduler the policy names ({@code scheduling.schedulerName}), the one
 * that asks this service where its GPUs are. A pod that names a scheduler of its own keeps it. The
 * API server defaults {@code schedulerName} to {@code default-scheduler} when it decodes the pod,
 * before any webhook sees it, so that value means "none chosen" (a user who writes it explicitly
 * cannot be told apart, and is moved too).
 */
public final class GpuSchedulerRule implements PodMutationRule {
  public static final String NAME = "gpu-scheduler";
  private static final String DEFAULT_SCHEDULER = "default-scheduler";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void apply(Pod pod, MutationContext context, MutationReport report) {
    var policy = context.policy();
    var scheduler = policy.scheduling().gpuScheduler();
    if (scheduler.isEmpty() || !PodResources.asksFor(pod, policy::isGpuResource)) {
      return;
    }
    var current = pod.getSpec().getSchedulerName();
    if (current == null || current.isEmpty() || current.equals(DEFAULT_SCHEDULER)) {
      pod.getSpec().setSchedulerName(scheduler.get());
      report.changed(
          NAME,
          "schedulerName " + scheduler.get() + " (GPU pods are placed by the GPU-aware scheduler)");
    } else if (!current.equals(scheduler.get())) {
      report.note("pod keeps schedulerName " + current + "; policy would use " + scheduler.get());
    }
  }
}
