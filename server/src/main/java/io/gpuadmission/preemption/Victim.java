package io.gpuadmission.preemption;

import io.gpuadmission.placement.GpuClaim;

/** A pod on a node that preemption may evict: what it is ({@link PodFacts}) and the GPUs it holds there. */
public record Victim(PodFacts facts, GpuClaim claim) {
  public String uid() {
    return claim.podUid();
  }
}
