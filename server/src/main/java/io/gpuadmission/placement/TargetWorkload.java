package io.gpuadmission.placement;

import io.gpuadmission.allocator.Task;
import io.gpuadmission.allocator.TaskDistribution;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import io.gpuadmission.policy.FgdWorkloadPolicy;

/**
 * The workload FGD measures fragmentation against: each kind of ask with its weight (a number of
 * pods when learned), where it comes from, how many pods it is drawn from, and a version that
 * changes whenever the weights do (so that what is derived from it is rebuilt only then).
 */
public record TargetWorkload(Source source, Map<Task, Double> weights, int pods, long version) {
  /** Where a target workload comes from. */
  public enum Source {
    /** Declared in the policy ({@code allocator.fgdWorkload.declared}). */
    POLICY,
    /** Learned from the GPU pods of the cluster. */
    LEARNED,
    /** Handed over by the caller (the trace simulator's reference run). */
    GIVEN
  }

  /** No pod to learn from yet. */
  public static final TargetWorkload NONE = new TargetWorkload(Source.LEARNED, Map.of(), 0, 0);

  public TargetWorkload {
    weights = Collections.unmodifiableMap(new LinkedHashMap<>(weights));
  }

  /** A fixed distribution of tasks, as the trace simulator's reference run gives it. */
  public static TargetWorkload given(TaskDistribution distribution) {
    var weights = new LinkedHashMap<Task, Double>();
    for (int i = 0; i < distribution.size(); i++) {
      weights.merge(distribution.task(i), distribution.probability(i), Double::sum);
    }
    return new TargetWorkload(Source.GIVEN, weights, 0, -2);
  }

  /** The policy's declared workload, empty when it declares none (the learned one is used). */
  public static Optional<TargetWorkload> declared(FgdWorkloadPolicy policy) {
    if (policy.declared().isEmpty()) {
      return Optional.empty();
    }
    var weights = new LinkedHashMap<Task, Double>();
    for (var ask : policy.declared()) {
      var cpu = ask.cpuMilli();
      var task = ask.gpuMemory().isPresent() ? Task.share(cpu, ask.gpuMemory().get()) : Task.whole(cpu, ask.gpus().orElseThrow());
      weights.merge(task, ask.weight(), Double::sum);
    }
    return Optional.of(new TargetWorkload(Source.POLICY, weights, 0, -1));
  }

  public boolean isEmpty() {
    return weights.isEmpty();
  }

  /** The allocator's form; call only when not empty. */
  public TaskDistribution distribution() {
    return TaskDistribution.weighted(weights);
  }

  /** The GPUs of an ask as the metrics label them: {@code 4GiB of one GPU}, {@code 2 whole GPUs}. */
  public static String describe(Task task) {
    return switch (task.kind()) {
      case NONE -> "no GPU";
      case SHARE -> task.perGpu() + "GiB of one GPU";
      case WHOLE -> task.gpus() + " whole GPU" + (task.gpus() == 1 ? "" : "s");
    };
  }

  /** An ask in full, as {@code /extender/inspect} lists it: {@code 4GiB of one GPU, 2 CPU}. */
  public static String describeWithCpu(Task task) {
    if (task.cpuMilli() == 0) {
      return describe(task);
    }
    var cpu = task.cpuMilli() % 1000 == 0 ? Long.toString(task.cpuMilli() / 1000) : task.cpuMilli() + "m";
    return describe(task) + ", " + cpu + " CPU";
  }
}
