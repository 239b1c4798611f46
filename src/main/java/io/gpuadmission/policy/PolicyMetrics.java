package io.gpuadmission.policy;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.ArrayList;
import java.util.List;

/** Publishes policy_generation, policy_source{source} and policy_reload_failures_total. */
@ApplicationScoped
public class PolicyMetrics {
  private final List<Meter> meters = new ArrayList<>();
  private MeterRegistry registry;

  void register(@Observes StartupEvent event, MeterRegistry registry, PolicyStore store, PolicyStatus status) {
    this.registry = registry;
    // A gauge already registered under the name (an earlier application in the same JVM, as in
    // tests) would keep reading that application's store: replace it.
    for (var name : new String[] {"policy_generation", "policy_source", "policy_reload_failures"}) {
      registry.find(name).meters().forEach(registry::remove);
    }
    meters.add(
        Gauge.builder("policy_generation", store, s -> s.active().generation())
            .description("How many times the policy in force has been replaced, plus one")
            .register(registry));
    for (var source : PolicyStore.PolicySource.values()) {
      meters.add(
          Gauge.builder("policy_source", store, s -> s.active().source() == source ? 1 : 0)
              .description("1 for where the policy in force came from")
              .tag("source", source.name().toLowerCase(java.util.Locale.ROOT))
              .register(registry));
    }
    meters.add(
        FunctionCounter.builder("policy_reload_failures", status, PolicyStatus::failures)
            .description("Policy ConfigMap versions that could not be used")
            .register(registry));
  }

  /**
   * Micrometer keeps a meter per name and tags for the life of the registry, which can outlive this
   * application (a restart in the same JVM: tests, dev mode); a new start would otherwise be handed
   * the old meters, still reading the old store.
   */
  void unregister(@Observes ShutdownEvent event) {
    if (registry != null) {
      meters.forEach(registry::remove);
      meters.clear();
    }
  }
}
