package io.gpuadmission.allocator;

import java.util.Arrays;

/** Where a task goes: the node's position in the list it was chosen from, and its GPU indices. */
public record Placement(int node, int[] gpus) {
  public Placement {
    gpus = gpus.clone();
  }

  @Override
  public int[] gpus() {
    return gpus.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Placement p && p.node == node && Arrays.equals(p.gpus, gpus);
  }

  @Override
  public int hashCode() {
    return node * 31 + Arrays.hashCode(gpus);
  }

  @Override
  public String toString() {
    return "node " + node + " GPUs " + Arrays.toString(gpus);
  }
}
