package io.gpuadmission.health;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.gpuadmission.metrics.Meters;
import io.gpuadmission.mode.ServerStartup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryNotificationInfo;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.Comparator;
import java.util.Optional;
import javax.management.NotificationEmitter;
import org.jboss.logging.Logger;

/**
 * Says when the heap runs short, before an OutOfMemoryError ends the process: the old generation
 * still {@value #SHORT_PERCENT}% full right after a collection means the live set (mostly the
 * cluster's nodes and GPU pods) has outgrown the heap the container's memory limit gives. The JVM
 * tells through a collection-usage threshold (checked after each collection, at no cost between);
 * this logs it once per episode, and the metric and the readiness data show it while it lasts. A
 * native executable's serial collector has no thresholds and no maximum per pool: there the old
 * generation is the heap pool only its complete collections manage, measured against the heap's
 * maximum whenever the readiness probe or a metrics scrape asks.
 */
@ApplicationScoped
public class HeapPressure {
  private static final Logger LOG = Logger.getLogger(HeapPressure.class);
  static final int SHORT_PERCENT = 85;

  private final Optional<MemoryPoolMXBean> oldGen = oldGeneration();
  private volatile boolean short_;

  void start(@Observes ServerStartup event, MeterRegistry registry) {
    Meters.forget(registry, "gpu_admission_heap_live_ratio", "gpu_admission_heap_short");
    oldGen.filter(MemoryPoolMXBean::isCollectionUsageThresholdSupported).ifPresent(pool -> {
      pool.setCollectionUsageThreshold(pool.getUsage().getMax() * SHORT_PERCENT / 100);
      ((NotificationEmitter) ManagementFactory.getMemoryMXBean()).addNotificationListener((notification, handback) -> {
        if (MemoryNotificationInfo.MEMORY_COLLECTION_THRESHOLD_EXCEEDED.equals(notification.getType())) {
          check();
        }
      }, null, null);
    });
    Gauge.builder("gpu_admission_heap_live_ratio", this, h -> h.liveRatio().orElse(Double.NaN))
        .description("Old generation in use after the last collection, as a fraction of its maximum (above 0.85: raise the memory limit)")
        .register(registry);
    Gauge.builder("gpu_admission_heap_short", this, h -> h.isShort() ? 1 : 0)
        .description("1 while the heap stays over 85% full after collections: raise the Deployment's memory limit")
        .register(registry);
  }

  /** The old generation's use after the last collection over its maximum; empty before any or without one. */
  public Optional<Double> liveRatio() {
    return oldGen.flatMap(pool -> {
      var after = pool.getCollectionUsage();
      var max = max(pool);
      return after == null || max <= 0 ? Optional.empty() : Optional.of(after.getUsed() / (double) max);
    });
  }

  public long maxBytes() {
    return oldGen.map(HeapPressure::max).orElse(-1L);
  }

  /** The pool's maximum, or the heap's where the pool has none of its own (a native executable's). */
  private static long max(MemoryPoolMXBean pool) {
    var max = pool.getUsage().getMax();
    return max > 0 ? max : ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getMax();
  }

  /** True while the heap stays short after collections; logs each change. */
  public synchronized boolean isShort() {
    check();
    return short_;
  }

  private synchronized void check() {
    var ratio = liveRatio().orElse(0.0);
    var now = ratio * 100 >= SHORT_PERCENT;
    if (now && !short_) {
      LOG.warnf("heap short: %.0f%% of the old generation (%d MiB) still in use after a collection; the cluster's nodes and pods"
          + " have outgrown the heap, which is a share of the container's memory limit: raise the limit (docs/operations.md, Sizing)"
          + " before an OutOfMemoryError restarts the service", ratio * 100, maxBytes() >> 20);
    } else if (!now && short_) {
      LOG.infof("heap no longer short: %.0f%% of the old generation in use after the last collection", ratio * 100);
    }
    short_ = now;
  }

  private static Optional<MemoryPoolMXBean> oldGeneration() {
    var pools = ManagementFactory.getMemoryPoolMXBeans();
    var jvm = pools.stream()
        .filter(pool -> pool.getType() == MemoryType.HEAP && pool.isCollectionUsageThresholdSupported() && pool.getUsage().getMax() > 0)
        .max(Comparator.comparingLong(pool -> pool.getUsage().getMax()));
    if (jvm.isPresent()) {
      return jvm;
    }
    // The heap pool the fewest collectors manage: a generational collector's old generation.
    var collectors = ManagementFactory.getGarbageCollectorMXBeans();
    return pools.stream().filter(pool -> pool.getType() == MemoryType.HEAP)
        .min(Comparator.comparingLong(pool -> collectors.stream().filter(gc -> java.util.List.of(gc.getMemoryPoolNames()).contains(pool.getName())).count()));
  }
}
