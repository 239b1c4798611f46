package io.gpuadmission.allocator;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.random.RandomGenerator;

/** A uniformly random feasible placement (the baseline of the FGD paper); allocates freely. */
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
      var node = nodes.get(n);
      GpuOptions.visit(
          node,
          task,
          new GpuOptions.Visitor() {
            @Override
            public void option(int[] gpus) {
              feasible.add(new Placement(position, gpus));
            }

            @Override
            public int[] scratch(int size) {
              return new int[size];
            }
          });
    }
    if (feasible.isEmpty()) {
      return Optional.empty();
    }
    var pick = feasible.get(random.nextInt(feasible.size()));
    var node = nodes.get(pick.node());
    if (task.isWhole()) {
      return whole.choose(node, task.gpus()).map(choice -> new Placement(pick.node(), choice.gpus()));
    }
    return Optional.of(pick);
  }
}
