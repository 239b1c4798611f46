package io.gpuadmission.allocator;

import java.util.List;
import java.util.Optional;

/**
 * Chooses a node, and GPUs on it, for a task among a cluster's nodes. Deterministic for the same
 * input (ties go to the lower node position, then the lower GPU index).
 */
public interface PlacementPolicy {
  Optional<Placement> place(List<NodeGpus> nodes, Task task);
}
