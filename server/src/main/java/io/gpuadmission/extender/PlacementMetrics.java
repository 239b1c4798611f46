package io.gpuadmission.extender;

import io.gpuadmission.mode.ServerStartup;
import io.gpuadmission.allocator.Fragmentation;
import io.gpuadmission.cluster.GpuNode;
import io.gpuadmission.cluster.NodeInventory;
import io.gpuadmission.metrics.Meters;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LedgerInspection;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.TargetWorkload;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * What operators watch of the GPUs, read from the ledger on a schedule (a scrape never waits on
 * it): per node and pool the GPUs and GPU memory there and what is allocated (as {@code
 * /extender/inspect} counts it: pods on GPUs the node no longer has included, so allocated can
 * exceed total), the GPUs held beyond what they have; per pool the GPU memory fragmentation the
 * FGD allocator minimises, measured against FGD's target workload; and that workload itself (each
 * ask's share, and how many pods it is drawn from).
 */
@ApplicationScoped
public class PlacementMetrics {
  private static final long GIB = 1L << 30;
  private static final String NO_POOL = "none";
  static final String WORKLOAD_PODS = "gpu_admission_fgd_workload_pods";
  static final String WORKLOAD_SHARE = "gpu_admission_fgd_workload_share";

  private final GpuLedger ledger;
  private final Supplier<TargetWorkload> workload;
  private final NodeInventory nodes;
  private final MeterRegistry registry;
  private final Duration period;
  private final Map<String, MultiGauge> gauges = new HashMap<>();
  private ScheduledExecutorService refresher;
  /** The ledger generation and workload the gauges show; nothing is recomputed while they stand. */
  private long shown = -1;
  private TargetWorkload shownWorkload;

  public PlacementMetrics(
      GpuLedger ledger,
      PlacementDecider decider,
      NodeInventory nodes,
      MeterRegistry registry,
      @ConfigProperty(name = "gpu-admission.metrics.placement-period", defaultValue = "15s") Duration period) {
    this.ledger = ledger;
    this.workload = decider::workload;
    this.nodes = nodes;
    this.registry = registry;
    this.period = period;
  }

  void start(@Observes ServerStartup event) {
    gauge("gpu_admission_node_gpus", "GPUs of a node, by node and pool");
    gauge("gpu_admission_node_gpus_allocated", "Whole GPUs of a node held by pods (a share holds part of one)");
    gauge("gpu_admission_node_gpu_memory_bytes", "GPU memory of a node, by node and pool");
    gauge("gpu_admission_node_gpu_memory_allocated_bytes", "GPU memory of a node held by pods, whole GPUs and shares (above the total when over-committed)");
    gauge(
        "gpu_admission_node_gpus_overcommitted",
        "GPUs of a node held beyond what they have: GPUs the node no longer has that pods still hold, GPUs claimed past their memory");
    gauge("gpu_admission_pool_gpu_memory_fragmented_bytes", "Free GPU memory of a pool that asks of FGD's target workload could not use, weighted by how often each comes (FGD's measure)");
    gauge(WORKLOAD_PODS, "GPU pods FGD's learned target workload is drawn from (pending, running, ended within the window); 0 for a workload the policy declares");
    gauge(WORKLOAD_SHARE, "Share of each GPU ask in FGD's target workload (\"4GiB of one GPU\", \"2 whole GPUs\"; CPU requests summed over)");
    refresher = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "placement-metrics"));
    refresher.scheduleWithFixedDelay(this::refresh, 0, period.toMillis(), TimeUnit.MILLISECONDS);
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    if (refresher != null) {
      refresher.shutdownNow();
    }
    gauges.values().forEach(gauge -> gauge.register(List.of(), true));
  }

  private void gauge(String name, String description) {
    Meters.forget(registry, name);
    gauges.put(name, MultiGauge.builder(name).description(description).register(registry));
  }

  synchronized void refresh() {
    // Every change of the ledger (claims, nodes, their labels, health) bumps its generation.
    // Synchronized: a caller that finds the generation shown must find its rows registered too.
    var generation = ledger.generation();
    var target = workload.get();
    if (generation == shown && target == shownWorkload) {
      return;
    }
    shown = generation;
    shownWorkload = target;
    var pools = new HashMap<String, String>();
    for (GpuNode node : nodes.nodes()) {
      pools.put(node.name(), node.pool().orElse(NO_POOL));
    }
    var fragmentation = target.isEmpty() ? null : new Fragmentation(target.distribution());
    var rows = new HashMap<String, List<MultiGauge.Row<?>>>();
    gauges.keySet().forEach(name -> rows.put(name, new ArrayList<>()));
    var fragmented = new TreeMap<String, Double>();
    for (var name : ledger.nodes()) {
      var view = ledger.view(name);
      // Memory as inspect counts it, uncapped: the view caps each GPU at its size for the allocator.
      var inspected = LedgerInspection.node(ledger, name);
      if (view.isEmpty() || inspected.isEmpty()) {
        continue; // the node went between the two reads
      }
      var pool = pools.getOrDefault(name, NO_POOL);
      var tags = Tags.of("node", name, "pool", pool);
      var gpus = view.get().gpus();
      var whole = 0;
      for (var gpu : gpus) {
        whole += gpu.capacity() > 0 && gpu.used() == gpu.capacity() ? 1 : 0;
      }
      rows.get("gpu_admission_node_gpus").add(MultiGauge.Row.of(tags, gpus.size()));
      rows.get("gpu_admission_node_gpus_allocated").add(MultiGauge.Row.of(tags, whole));
      rows.get("gpu_admission_node_gpu_memory_bytes").add(MultiGauge.Row.of(tags, inspected.get().totalGPU() * GIB));
      rows.get("gpu_admission_node_gpu_memory_allocated_bytes").add(MultiGauge.Row.of(tags, inspected.get().usedGPU() * GIB));
      rows.get("gpu_admission_node_gpus_overcommitted").add(MultiGauge.Row.of(tags, inspected.get().overcommittedGPUs()));
      fragmented.merge(pool, fragmentation == null ? 0 : fragmentation.of(view.get()) * GIB, Double::sum);
    }
    fragmented.forEach((pool, bytes) -> rows.get("gpu_admission_pool_gpu_memory_fragmented_bytes").add(MultiGauge.Row.of(Tags.of("pool", pool), bytes)));
    var source = target.source().name().toLowerCase(java.util.Locale.ROOT);
    rows.get(WORKLOAD_PODS).add(MultiGauge.Row.of(Tags.of("source", source), target.pods()));
    // By GPU ask only: CPU requests vary too much for a label.
    var total = target.weights().values().stream().mapToDouble(Double::doubleValue).sum();
    var byAsk = new TreeMap<String, Double>();
    target.weights().forEach((task, weight) -> byAsk.merge(TargetWorkload.describe(task), weight / total, Double::sum));
    byAsk.forEach((ask, share) -> rows.get(WORKLOAD_SHARE).add(MultiGauge.Row.of(Tags.of("ask", ask, "source", source), share)));
    rows.forEach((name, list) -> gauges.get(name).register(list, true));
  }
}
