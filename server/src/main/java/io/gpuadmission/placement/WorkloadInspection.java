package io.gpuadmission.placement;

import java.util.ArrayList;
import java.util.List;

/**
 * FGD's target workload as {@code /extender/inspect} shows it: where it comes from ({@code
 * learned} or {@code policy}), how many pods it is drawn from (learned: pending, running, and ended
 * within {@code learnedWindowMinutes}), and each kind of ask with its weight (pods, when learned)
 * and its share of the whole.
 */
public record WorkloadInspection(String source, int pods, int learnedWindowMinutes, List<Ask> asks) {
  /** One kind of ask: {@code gpuMemory} GiB of one GPU, or {@code gpus} whole GPUs, and {@code cpu} millicores. */
  public record Ask(String ask, Long gpuMemory, Integer gpus, long cpu, double weight, double share) {}

  public static WorkloadInspection of(TargetWorkload workload, int learnedWindowMinutes) {
    var total = workload.weights().values().stream().mapToDouble(Double::doubleValue).sum();
    var asks = new ArrayList<Ask>();
    workload.weights().forEach((task, weight) -> asks.add(new Ask(
        TargetWorkload.describeWithCpu(task),
        task.isShare() ? task.perGpu() : null,
        task.isWhole() ? task.gpus() : null,
        task.cpuMilli(),
        weight,
        Math.round(weight / total * 10_000) / 10_000.0)));
    return new WorkloadInspection(workload.source().name().toLowerCase(java.util.Locale.ROOT), workload.pods(), learnedWindowMinutes, asks);
  }
}
