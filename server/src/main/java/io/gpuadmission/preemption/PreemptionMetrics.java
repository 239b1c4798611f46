package io.gpuadmission.preemption;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Preemptions the placement leader made itself ({@code outcome="preempted"}), attempts that found
 * no victims ({@code no_victims}) or failed ({@code error}), and the pods they evicted.
 */
public final class PreemptionMetrics {
  private final MeterRegistry registry;
  private final Map<String, Counter> attempts = new ConcurrentHashMap<>();
  private final Counter victims;

  public PreemptionMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.victims =
        Counter.builder("gpu_admission_preemption_victims")
            .description("Pods the placement leader evicted to free GPUs for pods of higher priority")
            .register(registry);
  }

  void record(String outcome) {
    attempts
        .computeIfAbsent(
            outcome,
            o ->
                Counter.builder("gpu_admission_preemptions")
                    .description("Preemptions the placement leader attempted for GPU pods kube-scheduler could not place, by outcome")
                    .tag("outcome", o)
                    .register(registry))
        .increment();
  }

  void victims(int count) {
    victims.increment(count);
  }
}
