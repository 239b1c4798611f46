package io.gpuadmission.health;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Reports whether the heap runs short ({@link HeapPressure}). Always up: the replicas of one
 * cluster hold the same nodes and pods and run short together, and taking them all out of the
 * Service would refuse every GPU pod; the data says what to do instead.
 */
@Readiness
@ApplicationScoped
public class HeapHealthCheck implements HealthCheck {
  private final HeapPressure heap;

  public HeapHealthCheck(HeapPressure heap) {
    this.heap = heap;
  }

  @Override
  public HealthCheckResponse call() {
    var response = HealthCheckResponse.named("heap")
        .up()
        .withData("short", heap.isShort())
        // The heap objects can use (the docs' 922 MiB less the survivor space kept empty: 891), and the
        // pool the ratio is of: with the serial collector the old generation, two thirds (614).
        .withData("heapMaxMiB", java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getMax() >> 20)
        .withData("oldGenerationMaxMiB", heap.maxBytes() >> 20);
    heap.liveRatio().ifPresent(ratio -> response.withData("liveAfterGcPercent", Math.round(ratio * 100)));
    if (heap.isShort()) {
      response.withData("action", "raise the Deployment's memory limit: the heap is a share of it (docs/operations.md, Sizing)");
    }
    return response.build();
  }
}
