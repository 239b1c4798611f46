package io.gpuadmission.metrics;

import io.micrometer.core.instrument.config.MeterFilter;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * Quarkus' Netty binder binds Micrometer's NettyEventExecutorMetrics twice, for Vert.x's event
 * loops and for its acceptor loop, and that class names its {@code netty.eventexecutor.workers}
 * gauge with no tag telling the groups apart: the second registration is refused with a WARN on
 * every start, and the gauge that stays counts only the first group (1, the acceptor, where two
 * event loops run). It is left out; {@code netty_eventexecutor_tasks_pending} has a series per
 * loop thread of both groups, so the loops are still seen.
 */
public class NettyMeterFilter {
  static final String WORKERS = "netty.eventexecutor.workers";

  @Produces
  @Singleton
  MeterFilter withoutEventExecutorWorkers() {
    return MeterFilter.denyNameStartsWith(WORKERS);
  }
}
