package io.gpuadmission.policy;

import io.gpuadmission.mode.ServerStartup;
import io.gpuadmission.metrics.Meters;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Publishes policy_generation, policy_source{source}, policy_reload_failures_total and
 * policy_last_reload_failed.
 */
@ApplicationScoped
public class PolicyMetrics {
  void register(@Observes ServerStartup event, MeterRegistry registry, PolicyStore store, PolicyStatus status) {
    Meters.forget(registry, "policy_generation", "policy_source", "policy_reload_failures", "policy_last_reload_failed");
    Gauge.builder("policy_generation", store, s -> s.active().generation())
        .description("How many times the policy in force has been replaced, plus one")
        .register(registry);
    for (var source : PolicyStore.PolicySource.values()) {
      Gauge.builder("policy_source", store, s -> s.active().source() == source ? 1 : 0)
          .description("1 for where the policy in force came from")
          .tag("source", source.name().toLowerCase(java.util.Locale.ROOT))
          .register(registry);
    }
    FunctionCounter.builder("policy_reload_failures", status, PolicyStatus::failures)
        .description("Policy ConfigMap versions that could not be used")
        .register(registry);
    // A state, not an event: an alert on it lasts exactly as long as the ConfigMap's version is
    // not the policy in force, however long ago the failed reload was.
    Gauge.builder("policy_last_reload_failed", status, s -> s.lastError().isPresent() ? 1 : 0)
        .description("1 while the policy ConfigMap's current version could not be used (the last good policy is in force), else 0")
        .register(registry);
  }
}
