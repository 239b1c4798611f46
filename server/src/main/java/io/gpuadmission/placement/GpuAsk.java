package io.gpuadmission.placement;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.allocator.Task;
import io.gpuadmission.pod.CpuRequest;
import io.gpuadmission.pod.PodResources;
import io.gpuadmission.pod.TopologyJob;
import io.gpuadmission.policy.GpuPolicy;
import java.util.Set;

/**
 * What a pod asks of the GPUs of one node: nothing the extender manages, a memory share of one GPU
 * (GiB), or a number of whole GPUs, both the pod's effective request as kube-scheduler counts it
 * (init and sidecar containers included: {@link PodResources#effective}); and its CPU request
 * (milli), which FGD weighs (a node whose CPU is spent strands the GPUs it has left). Allowed GPU
 * models are left empty by the extender, where the pod's node selection handles them; the trace
 * simulator sets them. {@code nvlink}: the whole GPUs must all be pairwise NVLink-connected (a
 * topology job's pod under policy {@code topology.requireNVLink}; only asked of two or more GPUs).
 */
public record GpuAsk(Kind kind, long memory, int count, long cpuMilli, Set<String> models, boolean nvlink) {
  public static final GpuAsk NONE = new GpuAsk(Kind.NONE, 0, 0, 0, Set.of(), false);

  public GpuAsk {
    models = Set.copyOf(models);
  }

  /** The three kinds of pod the extender sees. */
  public enum Kind {
    NONE,
    SHARE,
    WHOLE
  }

  public static GpuAsk share(long memory) {
    return new GpuAsk(Kind.SHARE, memory, 1, 0, Set.of(), false);
  }

  public static GpuAsk whole(int count) {
    return new GpuAsk(Kind.WHOLE, 0, count, 0, Set.of(), false);
  }

  /** {@code count} whole GPUs, all pairwise NVLink-connected when there are two or more. */
  public static GpuAsk nvlinked(int count) {
    return new GpuAsk(Kind.WHOLE, 0, count, 0, Set.of(), count > 1);
  }

  /** This ask with CPU and allowed models, for a ledger that counts them. */
  public GpuAsk with(long cpu, Set<String> allowedModels) {
    return new GpuAsk(kind, memory, count, cpu, allowedModels, nvlink);
  }

  /**
   * Reads the pod's ask: the policy's share resource ({@code aliyun.com/gpu-mem}) first, then its
   * whole-GPU resources ({@code aliyun.com/gpu} on topology nodes, {@code nvidia.com/gpu}), which
   * must be NVLink-connected for a topology job's pod when the policy requires it; with the pod's
   * CPU request as kube-scheduler counts it. A pod asking both a share and whole GPUs (refused at
   * admission: no node offers both) is read as a share.
   */
  public static GpuAsk of(Pod pod, GpuPolicy policy) {
    var memory = PodResources.effective(pod, policy.sharedMemory().resourceName()).longValue();
    if (memory > 0) {
      return share(memory).with(CpuRequest.milli(pod), Set.of());
    }
    var whole =
        PodResources.effective(pod, policy.topology().resourceName())
            .add(PodResources.effective(pod, policy.topology().wholeGpuResource()))
            .intValue();
    if (whole <= 0) {
      return NONE;
    }
    var nvlink = policy.topology().requireNVLink() && TopologyJob.of(pod, policy.topology()).isPresent();
    return (nvlink ? nvlinked(whole) : whole(whole)).with(CpuRequest.milli(pod), Set.of());
  }

  /** The allocator's task for this ask: whole GPUs of any size, or a share of one GPU. */
  public Task task() {
    var task =
        switch (kind) {
          case NONE -> Task.none(cpuMilli);
          case SHARE -> Task.share(cpuMilli, memory);
          case WHOLE -> Task.whole(cpuMilli, count);
        };
    return models.isEmpty() ? task : task.withModels(models);
  }

  @Override
  public String toString() {
    return switch (kind) {
      case NONE -> "no GPU";
      case SHARE -> memory + "GiB of one GPU";
      case WHOLE -> count + (nvlink ? " NVLink-connected" : "") + " whole GPU" + (count == 1 ? "" : "s");
    };
  }
}
