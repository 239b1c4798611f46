package io.gpuadmission.mutation;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.pod.PodResources;

/**
 * Sends a GPU pod to the scheduler the policy names ({@code scheduling.schedulerName}), the one
 * that asks this service where its GPUs are. A pod that already names a scheduler of its own keeps
 * it; the API server writes {@code default-scheduler} only after admission, so that value counts as
 * the user's choice too.
 */
public final class GpuSchedulerRule implements PodMutationRule {
  public static final String NAME = "gpu-scheduler";

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
    if (current == null || current.isEmpty()) {
      pod.getSpec().setSchedulerName(scheduler.get());
      report.changed(
          NAME,
          "schedulerName " + scheduler.get() + " (GPU pods are placed by the GPU-aware scheduler)");
    } else if (!current.equals(scheduler.get())) {
      report.note("pod keeps schedulerName " + current + "; policy would use " + scheduler.get());
    }
  }
}
