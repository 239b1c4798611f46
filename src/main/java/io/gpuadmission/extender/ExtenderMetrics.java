package io.gpuadmission.extender;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Extender calls by verb and outcome: {@code ok}, {@code error} (a bind that answered an Error:
 * the pod stays unbound and kube-scheduler retries it) or {@code malformed} (HTTP 400).
 */
@ApplicationScoped
public class ExtenderMetrics {
  private final MeterRegistry registry;
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();

  public ExtenderMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  void record(String verb, String outcome) {
    counters
        .computeIfAbsent(
            verb + ' ' + outcome,
            key ->
                Counter.builder("gpu_admission_extender_requests")
                    .description("kube-scheduler extender calls by verb and outcome (ok, error, malformed)")
                    .tag("verb", verb)
                    .tag("outcome", outcome)
                    .register(registry))
        .increment();
  }
}
