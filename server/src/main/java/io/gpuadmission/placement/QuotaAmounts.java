package io.gpuadmission.placement;

import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.quota.QuotaResources;
import java.util.HashMap;

/**
 * What a claim holds, or an ask wants, in a quota tree's resources: whole GPUs under both whole-GPU
 * resources ({@code nvidia.com/gpu} and {@code aliyun.com/gpu}: a tree may write either), GiB of GPU
 * memory under the share resource ({@code aliyun.com/gpu-mem}), and the pod's CPU (millicores) under
 * {@code cpu}, as the ledger counts it for GPU pods. Memory (bytes) is not counted here.
 */
public final class QuotaAmounts {
  private QuotaAmounts() {}

  /** The claim's GPUs and CPU. */
  public static QuotaResources of(GpuClaim claim, GpuPolicy policy) {
    return claim.whole() ? whole(claim.gpus().size(), claim.cpuMilli(), policy) : share(claim.memory(), claim.cpuMilli(), policy);
  }

  /** The ask's GPUs and CPU; nothing for a pod without GPUs. */
  public static QuotaResources of(GpuAsk ask, GpuPolicy policy) {
    return switch (ask.kind()) {
      case NONE -> QuotaResources.NONE;
      case SHARE -> share(ask.memory(), ask.cpuMilli(), policy);
      case WHOLE -> whole(ask.count(), ask.cpuMilli(), policy);
    };
  }

  /** {@code count} whole GPUs (a gang's members together). */
  public static QuotaResources whole(long count, long cpuMilli, GpuPolicy policy) {
    var amounts = new HashMap<String, Long>();
    amounts.put(policy.topology().wholeGpuResource(), count);
    amounts.put(policy.topology().resourceName(), count);
    if (cpuMilli > 0) {
      amounts.put("cpu", cpuMilli);
    }
    return QuotaResources.of(amounts);
  }

  /**
   * Only the resources the tree names: an amount of a resource no quota node names is not counted
   * (else a min that does not name it would read as 0 of it, and no leaf would ever be under its min).
   */
  public static QuotaResources named(QuotaResources amounts, java.util.Set<String> names) {
    var kept = new HashMap<String, Long>();
    amounts.asMap().forEach((name, amount) -> {
      if (names.contains(name)) {
        kept.put(name, amount);
      }
    });
    return QuotaResources.of(kept);
  }

  private static QuotaResources share(long memory, long cpuMilli, GpuPolicy policy) {
    var amounts = new HashMap<String, Long>();
    amounts.put(policy.sharedMemory().resourceName(), memory);
    if (cpuMilli > 0) {
      amounts.put("cpu", cpuMilli);
    }
    return QuotaResources.of(amounts);
  }
}
