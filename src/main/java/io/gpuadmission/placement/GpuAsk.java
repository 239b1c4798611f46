package io.gpuadmission.placement;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.allocator.Task;
import io.gpuadmission.pod.PodResources;
import io.gpuadmission.policy.GpuPolicy;

/**
 * What a pod asks of the GPUs of one node: nothing the extender manages, a memory share of one GPU
 * (GiB, summed over containers' limits as gpushare counts it), or a number of whole GPUs.
 */
public record GpuAsk(Kind kind, long memory, int count) {
  public static final GpuAsk NONE = new GpuAsk(Kind.NONE, 0, 0);

  /** The three kinds of pod the extender sees. */
  public enum Kind {
    NONE,
    SHARE,
    WHOLE
  }

  public static GpuAsk share(long memory) {
    return new GpuAsk(Kind.SHARE, memory, 1);
  }

  public static GpuAsk whole(int count) {
    return new GpuAsk(Kind.WHOLE, 0, count);
  }

  /**
   * Reads the pod's ask: the policy's share resource ({@code aliyun.com/gpu-mem}) first, then its
   * whole-GPU resources ({@code aliyun.com/gpu} on topology nodes, {@code nvidia.com/gpu}).
   */
  public static GpuAsk of(Pod pod, GpuPolicy policy) {
    var memory = PodResources.limitSum(pod, policy.sharedMemory().resourceName()).longValue();
    if (memory > 0) {
      return share(memory);
    }
    var whole =
        PodResources.limitSum(pod, policy.topology().resourceName())
            .add(PodResources.limitSum(pod, policy.topology().wholeGpuResource()))
            .intValue();
    return whole > 0 ? whole(whole) : NONE;
  }

  /** The allocator's task for this ask on a node whose GPUs hold {@code gpuCapacity} each. */
  public Task task(long gpuCapacity) {
    return kind == Kind.SHARE ? Task.share(0, memory) : Task.whole(0, count, gpuCapacity);
  }

  @Override
  public String toString() {
    return switch (kind) {
      case NONE -> "no GPU";
      case SHARE -> memory + "GiB of one GPU";
      case WHOLE -> count + " whole GPU" + (count == 1 ? "" : "s");
    };
  }
}
