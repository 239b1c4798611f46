package io.gpuadmission.placement;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.contract.GpuAnnotations;
import io.gpuadmission.pod.CpuRequest;
import java.util.List;
import java.util.Optional;

/**
 * A pod's claim on GPUs, read back from the annotations bind wrote on it ({@link GpuAnnotations}):
 * how the ledger is rebuilt, as the pods are the source of truth.
 */
public final class PodClaims {
  private PodClaims() {}

  /**
   * The claim a bound, running pod holds, from its annotations; empty for a pod that is not bound,
   * has finished (Succeeded and Failed pods free their GPUs), or carries no readable choice.
   */
  public static Optional<GpuClaim> claimOf(Pod pod) {
    var node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
    var annotations = pod.getMetadata().getAnnotations();
    if (node == null || node.isEmpty() || annotations == null || finished(pod)) {
      return Optional.empty();
    }
    var key = pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    var uid = pod.getMetadata().getUid();
    try {
      if (annotations.get(GpuAnnotations.MEM_IDX) != null && annotations.get(GpuAnnotations.MEM_POD) != null) {
        var gpu = Integer.parseInt(annotations.get(GpuAnnotations.MEM_IDX).trim());
        var memory = Long.parseLong(annotations.get(GpuAnnotations.MEM_POD).trim());
        return memory > 0 ? Optional.of(GpuClaim.bound(uid, key, node, List.of(gpu), memory, cpu(pod))) : Optional.empty();
      }
      var whole = GpuAnnotations.wholeGpus(annotations);
      if (whole.isPresent()) {
        return Optional.of(GpuClaim.bound(uid, key, node, whole.get(), 0, cpu(pod)));
      }
    } catch (NumberFormatException unreadable) {
      return Optional.empty();
    }
    return Optional.empty();
  }

  /** {@code GPU 2, 8GiB of aliyun.com/gpu-mem} for a share, {@code GPUs 0,3} for whole GPUs. */
  public static String describe(GpuClaim claim, String shareResource) {
    var gpus = (claim.gpus().size() == 1 ? "GPU " : "GPUs ") + GpuAnnotations.join(claim.gpus());
    return claim.whole() ? gpus : gpus + ", " + claim.memory() + "GiB of " + shareResource;
  }

  /** The pod's CPU request; 0 if unreadable, which must never cost the ledger the pod's GPUs. */
  private static long cpu(Pod pod) {
    try {
      return CpuRequest.milli(pod);
    } catch (ArithmeticException | IllegalArgumentException unreadable) {
      return 0;
    }
  }

  public static boolean finished(Pod pod) {
    var phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    return "Succeeded".equals(phase) || "Failed".equals(phase);
  }
}
