package io.gpuadmission.teamquota;

import io.gpuadmission.cluster.QuotaTreeStore;
import io.gpuadmission.metrics.Meters;
import io.gpuadmission.quota.QuotaNode;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.HashSet;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/**
 * Per quota node and resource: {@code gpu_admission_quota_min}, {@code _max}, {@code _used} and
 * {@code _borrowed} (canonical units: whole GPUs, GiB of GPU memory, millicores), registered for
 * the nodes of the tree in force and removed with them; {@code gpu_admission_quota_tree_invalid} is 1
 * while the tree's current version breaks a rule (the last good tree, if one was read, is in force).
 */
public final class QuotaMetrics {
  private static final String[] KINDS = {"min", "max", "used", "borrowed"};
  private final MeterRegistry registry;
  private final QuotaService service;
  private final Set<Meter.Id> registered = new HashSet<>();

  QuotaMetrics(MeterRegistry registry, QuotaService service, QuotaTreeStore store) {
    this.registry = registry;
    this.service = service;
    // An earlier application's meters of these names would still read its objects (Meters).
    Meters.forget(registry, "gpu_admission_quota_tree_invalid", "gpu_admission_quota_tree_reload_failures",
        "gpu_admission_quota_min", "gpu_admission_quota_max", "gpu_admission_quota_used", "gpu_admission_quota_borrowed");
    Gauge.builder("gpu_admission_quota_tree_invalid", store, s -> s.lastError().isPresent() ? 1 : 0)
        .description("1 while the ElasticQuotaTree's current version breaks a rule (the last good tree, if one was read, is in force), else 0")
        .register(registry);
    FunctionCounter.builder("gpu_admission_quota_tree_reload_failures", store, QuotaTreeStore::failures)
        .description("ElasticQuotaTree versions that broke a rule and were not used")
        .register(registry);
  }

  /** Registers the gauges of the tree in force now, and removes those of quota nodes it no longer has. */
  synchronized void refresh() {
    var wanted = new HashSet<Meter.Id>();
    var tree = service.gate().tree();
    if (tree.isPresent()) {
      var names = QuotaLedgerBook.names(tree.get());
      for (var node : tree.get().nodes()) {
        for (var resource : names) {
          for (var kind : KINDS) {
            if (kind.equals("max") && !node.max().has(resource)) {
              continue;
            }
            var name = "gpu_admission_quota_" + kind;
            var tags = Tags.of("quota", node.name(), "resource", resource);
            // Meter ids compare by name and tags: one registered before reads by name and stays
            // (registering it again makes Micrometer warn that it ignores the second).
            var id = new Meter.Id(name, tags, null, null, Meter.Type.GAUGE);
            if (registered.contains(id)) {
              wanted.add(id);
              continue;
            }
            var gauge = Gauge.builder(name, service, amount(node.name(), resource, kind))
                .description("Team quota " + kind + " of a quota node of the ElasticQuotaTree, per resource (whole GPUs, GiB, millicores)")
                .tags(tags)
                .register(registry);
            wanted.add(gauge.getId());
          }
        }
      }
    }
    for (var id : registered) {
      if (!wanted.contains(id)) {
        registry.remove(id);
      }
    }
    registered.clear();
    registered.addAll(wanted);
  }

  /** The amount now, looked up by name: a gauge outlives the tree object it was made for. */
  private static ToDoubleFunction<QuotaService> amount(String quota, String resource, String kind) {
    return service -> {
      var tree = service.gate().tree();
      var node = tree.flatMap(t -> t.node(quota));
      if (node.isEmpty()) {
        return Double.NaN;
      }
      QuotaNode n = node.get();
      return switch (kind) {
        case "min" -> n.min().get(resource);
        case "max" -> n.max().get(resource);
        case "used" -> service.book(tree.get()).used(n).get(resource);
        default -> service.book(tree.get()).borrowed(n).get(resource);
      };
    };
  }
}
