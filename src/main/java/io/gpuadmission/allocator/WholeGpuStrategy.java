package io.gpuadmission.allocator;

import java.util.Optional;

/** Chooses {@code count} whole free GPUs of one node, or none when the node cannot serve. */
public interface WholeGpuStrategy {
  Optional<GpuChoice> choose(NodeGpus node, int count);
}
