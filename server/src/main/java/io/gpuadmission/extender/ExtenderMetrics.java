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
  /** Off while warm-up posts sample requests: they are not kube-scheduler's. */
  private volatile boolean recording;

  public ExtenderMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /** Starts counting; called once warm-up is over. */
  public void startRecording() {
    recording = true;
  }

  void record(String verb, String outcome) {
    if (!recording) {
      return;
    }
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
