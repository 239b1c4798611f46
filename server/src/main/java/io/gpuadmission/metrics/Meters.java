package io.gpuadmission.metrics;

import io.micrometer.core.instrument.MeterRegistry;

/**
 * Micrometer's global registry can outlive an application (a restart in the same JVM: tests, dev
 * mode) and hands a new registration the existing meter of that name, still reading the earlier
 * application's objects. Gauges over this application's beans are registered after this.
 */
public final class Meters {
  private Meters() {}

  /** Removes every meter with one of {@code names}, whatever its tags. */
  public static void forget(MeterRegistry registry, String... names) {
    for (var name : names) {
      registry.find(name).meters().forEach(registry::remove);
    }
  }
}
