package io.gpuadmission.mutation;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.pod.PodResources;
import io.gpuadmission.pod.PodSelectors;
import io.gpuadmission.policy.SharedMemoryPolicy;

/**
 * A pod asking for a GPU-memory share goes to the cGPU pool that isolates memory, unless it says
 * it limits its own memory (then the share pool, which does not isolate, serves it).
 */
public final class SharedGpuMemoryRule implements PodMutationRule {
  public static final String NAME = "shared-gpu-memory";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void apply(Pod pod, MutationContext context, MutationReport report) {
    var policy = context.policy();
    var shared = policy.sharedMemory();
    if (!PodResources.asksFor(pod, shared.resourceName())) {
      return;
    }
    var selfLimited = limitsOwnMemory(pod, shared);
    var pool = selfLimited ? shared.selfLimitedPool() : shared.isolatedPool();
    var why = selfLimited ? "a pod that limits its own GPU memory" : "a GPU-memory pod without its own limit";
    var done = new StringBuilder();
    var poolLabel = policy.nodeLabels().pool();
    if (PoolSelection.select(pod, poolLabel, pool, why, report)) {
      done.append("nodeSelector ").append(poolLabel).append('=').append(pool).append(" (")
          .append(selfLimited ? "limits its own GPU memory" : "GPU memory isolation").append(')');
    }
    var placementLabel = policy.nodeLabels().placement();
    if (shared.placement().isPresent() && PodSelectors.nodeSelectorValue(pod, placementLabel).isEmpty()) {
      var placement = shared.placement().get().label();
      PodSelectors.putNodeSelector(pod, placementLabel, placement);
      done.append(done.isEmpty() ? "" : "; ").append("nodeSelector ").append(placementLabel).append('=').append(placement);
    }
    if (!done.isEmpty()) {
      report.changed(NAME, shared.resourceName() + ": " + done);
    }
  }

  private static boolean limitsOwnMemory(Pod pod, SharedMemoryPolicy shared) {
    var annotations = pod.getMetadata().getAnnotations();
    if (annotations != null && "true".equals(annotations.get(shared.selfLimitedAnnotation()))) {
      return true;
    }
    if (shared.selfLimitedEnv().isEmpty()) {
      return false;
    }
    return PodResources.allContainers(pod).stream()
        .filter(c -> c.getEnv() != null)
        .flatMap(c -> c.getEnv().stream())
        .anyMatch(env -> shared.selfLimitedEnv().contains(env.getName()));
  }
}
