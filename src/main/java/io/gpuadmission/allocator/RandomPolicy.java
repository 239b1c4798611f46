package io.gpuadmission.allocator;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.random.RandomGenerator;

/** A uniformly random feasible placement (the baseline of the FGD paper). */
public final class RandomPolicy implements PlacementPolicy {
  private final RandomGenerator random;
  private final WholeGpuStrategy whole;

  public RandomPolicy(RandomGenerator random, WholeGpuStrategy whole) {
    this.random = random;
    this.whole = whole;
  }

  @Override
  public Optional<Placement> place(List<NodeGpus> nodes, Task task) {
    var feasible = new ArrayList<Placement>();
    for (int n = 0; n < nodes.size(); n++) {
      var position = n;
      GpuOptions.forEach(nodes.get(n), task, whole, gpus -> feasible.add(new Placement(position, gpus)));
    }
    return feasible.isEmpty() ? Optional.empty() : Optional.of(feasible.get(random.nextInt(feasible.size())));
  }
}
