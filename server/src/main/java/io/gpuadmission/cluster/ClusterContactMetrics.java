package io.gpuadmission.cluster;

import io.gpuadmission.mode.ServerStartup;
import io.gpuadmission.metrics.Meters;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/** Publishes gpu_admission_cluster_connected and gpu_admission_cluster_seconds_since_contact. */
@ApplicationScoped
public class ClusterContactMetrics {
  void register(@Observes ServerStartup event, MeterRegistry registry, ClusterContact contact) {
    Meters.forget(registry, "gpu_admission_cluster_connected", "gpu_admission_cluster_seconds_since_contact");
    Gauge.builder("gpu_admission_cluster_connected", contact, c -> c.connected() ? 1 : 0)
        .description("1 while every informer is watching the API server")
        .register(registry);
    Gauge.builder("gpu_admission_cluster_seconds_since_contact", contact, ClusterContact::secondsSinceContact)
        .description("Seconds since the informers last watched the API server; 0 while they do")
        .baseUnit("seconds")
        .register(registry);
  }
}
