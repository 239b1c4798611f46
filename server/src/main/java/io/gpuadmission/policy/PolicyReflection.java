package io.gpuadmission.policy;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * Jackson builds the policy records reflectively; a native executable must keep their
 * constructors and accessors.
 */
@RegisterForReflection(
    targets = {
      GpuPolicy.class,
      NodeLabels.class,
      CpuPodPolicy.class,
      TopologyPolicy.class,
      TopologyPolicy.ConflictMode.class,
      SharedMemoryPolicy.class,
      Placement.class,
      GpuModelPolicy.class,
      AllocatorPolicy.class,
      AllocatorPolicy.WholeGpuStrategy.class,
      AllocatorPolicy.MemoryShareStrategy.class,
      FailureModePolicy.class,
      FailureModePolicy.FailureMode.class,
      SchedulingPolicy.class,
      FeasibilityPolicy.class,
      FeasibilityPolicy.OnInfeasible.class,
      QuotaPolicy.class
    })
final class PolicyReflection {
  private PolicyReflection() {}
}
