package io.gpuadmission.allocator;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How often each kind of task arrives: the "target workload" fragmentation is measured against
 * (FGD, Weng et al., ATC '23). Built from observed tasks (identical tasks are counted together) or
 * from weights given per kind of task.
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

  /**
   * Kinds of task with their relative weights (positive; they need not sum to 1), in the map's
   * order.
   */
  public static TaskDistribution weighted(Map<Task, ? extends Number> weights) {
    var tasks = new ArrayList<Task>(weights.size());
    var p = new double[weights.size()];
    double total = 0;
    for (var entry : weights.entrySet()) {
      var weight = entry.getValue().doubleValue();
      if (!(weight > 0) || Double.isInfinite(weight)) {
        throw new IllegalArgumentException("weight of " + entry.getKey() + " must be positive, is " + weight);
      }
      p[tasks.size()] = weight;
      tasks.add(entry.getKey());
      total += weight;
    }
    for (int i = 0; i < p.length; i++) {
      p[i] /= total;
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
