package io.gpuadmission.admission;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Request counts by endpoint and outcome, rule hits by endpoint and rule, and a latency histogram
 * per endpoint. Meters are cached: the registry lookup is not free on the hot path.
 */
@ApplicationScoped
public class AdmissionMetrics {
  /** How a review ended, as the {@code outcome} tag. */
  public enum Outcome {
    ALLOWED,
    PATCHED,
    DENIED,
    FAILED_OPEN,
    FAILED_CLOSED,
    MALFORMED;

    String tag() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  private final MeterRegistry registry;
  // Keyed without building a String per request: these lookups run on every review.
  private final Map<String, Map<Outcome, Counter>> requests = new ConcurrentHashMap<>();
  private final Map<String, Map<String, Counter>> ruleHits = new ConcurrentHashMap<>();
  private final Map<String, Timer> timers = new ConcurrentHashMap<>();
  /** Off while warm-up pushes sample reviews: they are not traffic. Nothing else arrives then. */
  private volatile boolean recording;

  public AdmissionMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /** Starts counting; called once warm-up is over. */
  public void startRecording() {
    recording = true;
  }

  public void record(String endpoint, Outcome outcome, long startNanos) {
    if (!recording) {
      return;
    }
    requests
        .computeIfAbsent(endpoint, e -> new ConcurrentHashMap<>())
        .computeIfAbsent(
            outcome,
            o ->
                Counter.builder("gpu_admission_requests")
                    .description("Admission and extender requests by endpoint and outcome")
                    .tag("endpoint", endpoint)
                    .tag("outcome", outcome.tag())
                    .register(registry))
        .increment();
    timers
        .computeIfAbsent(
            endpoint,
            k ->
                Timer.builder("gpu_admission_request_duration")
                    .description("Time to answer a request, decoding to encoding")
                    .tag("endpoint", endpoint)
                    .publishPercentileHistogram()
                    .minimumExpectedValue(Duration.ofMillis(1))
                    .maximumExpectedValue(Duration.ofSeconds(10))
                    .register(registry))
        .record(System.nanoTime() - startNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  public void ruleApplied(String endpoint, String rule) {
    if (!recording) {
      return;
    }
    ruleHits
        .computeIfAbsent(endpoint, e -> new ConcurrentHashMap<>())
        .computeIfAbsent(
            rule,
            r ->
                Counter.builder("gpu_admission_rule_hits")
                    .description("Rules that changed or refused an object")
                    .tag("endpoint", endpoint)
                    .tag("rule", rule)
                    .register(registry))
        .increment();
  }
}
