package io.gpuadmission.allocator;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How much of a GPU's free memory a workload of shares is expected to leave unfilled for good: a
 * lookahead FGD's one-task measure lacks. FGD asks whether the next task fits a GPU's remainder;
 * this follows the remainder through the tasks that will keep arriving. A remainder that a common
 * share fits gets filled and its waste is what that share leaves; one that only rare shares fit
 * stays free. So an empty GPU is not worth its whole memory: on the Alibaba trace's shares 40 % of
 * the tasks ask 810 of 1000 and the GPU that takes one strands 190 that only 2 % of the tasks fit,
 * while a 320 share opening it leaves 680 that 650, 470 and 320 shares close to within 30–60.
 *
 * <p>{@code waste(f)} for a remainder {@code f}: with {@code fit(f)} the probability that an
 * arriving task fits it, the remainder is filled with probability {@code q = min(1, OFFERS *
 * fit(f) * capacity / meanTake)} (it is offered about {@link #OFFERS} GPUs' worth of tasks before
 * the cluster fills up) by a fitting task drawn by frequency, and otherwise stays as it is: {@code
 * waste(f) = (1 - q) f + q E[waste(f - take) | fits]}. Whole-GPU tasks fit an empty GPU only and
 * leave nothing. GPU models a task is limited to are not told apart: the table is per GPU size.
 * Computed on at most {@link #BUCKETS} + 1 points per size (a GPU counted in MiB is cut into
 * buckets), once per size for a workload.
 */
final class RemainderWaste {
  /**
   * How many GPUs' worth of tasks a remainder is offered: with fewer, common remainders count as
   * waste that later tasks would have filled; with every remainder deemed filled (infinitely many),
   * the rare small shares that fill the 190s are counted on too often. The Alibaba trace's live
   * 100-node sample places 86.6–87.0 % from 4 to 15 (bench/README.md, "Trace quality").
   */
  static final double OFFERS = 6;

  static final int BUCKETS = 1000;

  private final TaskDistribution workload;
  private final Map<Long, Table> tables = new ConcurrentHashMap<>();

  private record Table(long unit, double[] waste) {}

  RemainderWaste(TaskDistribution workload) {
    this.workload = workload;
  }

  /** How much the expected waste of a GPU of {@code capacity} grows when its free goes from {@code before} to {@code after}. */
  double growth(long capacity, long before, long after) {
    var table = tables.computeIfAbsent(capacity, this::table);
    return at(table, after) - at(table, before);
  }

  private static double at(Table table, long free) {
    var waste = table.waste();
    var bucket = (int) Math.max(0, Math.min(waste.length - 1, free / table.unit()));
    return waste[bucket] * table.unit();
  }

  private Table table(long capacity) {
    var unit = Math.max(1, (capacity + BUCKETS - 1) / BUCKETS);
    var size = (int) (capacity / unit);
    var takes = new int[workload.size()];
    var weights = new double[workload.size()];
    double all = 0;
    double meanTake = 0;
    for (int i = 0; i < workload.size(); i++) {
      var task = workload.task(i);
      if (task.gpus() == 0 || task.takes(capacity) <= 0) {
        continue;
      }
      var take = Math.min(capacity, task.takes(capacity));
      takes[i] = task.isShare() ? (int) ((take + unit - 1) / unit) : size;
      weights[i] = workload.probability(i);
      all += weights[i];
      meanTake += weights[i] * take;
    }
    var waste = new double[size + 1];
    if (all == 0) {
      for (int f = 0; f <= size; f++) {
        waste[f] = f;
      }
      return new Table(unit, waste);
    }
    var offered = OFFERS * capacity / (meanTake / all);
    for (int f = 0; f <= size; f++) {
      double fit = 0;
      double after = 0;
      for (int i = 0; i < takes.length; i++) {
        if (weights[i] > 0 && takes[i] <= f) {
          fit += weights[i];
          after += weights[i] * waste[f - takes[i]];
        }
      }
      if (fit == 0) {
        waste[f] = f;
      } else {
        var filled = Math.min(1, offered * fit / all);
        waste[f] = (1 - filled) * f + filled * after / fit;
      }
    }
    return new Table(unit, waste);
  }
}
