package io.gpuadmission.allocator;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * How often each kind of task arrives: the "target workload" fragmentation is measured against
 * (FGD, Weng et al., ATC '23). Built from observed tasks; identical tasks are counted together.
 */
public final class TaskDistribution {
  private final List<Task> tasks;
  private final double[] probabilities;

  private TaskDistribution(List<Task> tasks, double[] probabilities) {
    this.tasks = List.copyOf(tasks);
    this.probabilities = probabilities.clone();
  }

  public static TaskDistribution of(Collection<Task> observed) {
    var counts = new LinkedHashMap<Task, Integer>();
    observed.forEach(t -> counts.merge(t, 1, Integer::sum));
    var tasks = new ArrayList<>(counts.keySet());
    var p = new double[tasks.size()];
    for (int i = 0; i < p.length; i++) {
      p[i] = counts.get(tasks.get(i)) / (double) observed.size();
    }
    return new TaskDistribution(tasks, p);
  }

  public int size() {
    return tasks.size();
  }

  public Task task(int i) {
    return tasks.get(i);
  }

  public double probability(int i) {
    return probabilities[i];
  }
}
