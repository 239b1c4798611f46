package io.gpuadmission.policy;

import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import java.util.List;
import java.util.Optional;

/**
 * Routing of GPU-memory-share pods: to the isolated (cGPU) pool by default, to the share pool when
 * the pod limits its own memory.
 */
public record SharedMemoryPolicy(
    String resourceName,
    String isolatedPool,
    String selfLimitedPool,
    @JsonSetter(nulls = Nulls.AS_EMPTY) Optional<Placement> placement,
    String selfLimitedAnnotation,
    List<String> selfLimitedEnv) {

  public SharedMemoryPolicy {
    placement = placement == null ? Optional.empty() : placement;
    selfLimitedEnv = List.copyOf(selfLimitedEnv);
  }
}
