package io.gpuadmission.pod;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The resources that must match across the members of a gang, per container name: limits and
 * requests of cpu, memory, ephemeral storage and the GPU resources.
 */
public record ResourceAsk(Map<String, ContainerAsk> containers) {
  public static final List<String> COMPARED =
      List.of("cpu", "memory", "ephemeral-storage", "aliyun.com/gpu", "nvidia.com/gpu", "aliyun.com/gpu-mem");

  /** One container's compared quantities, as written (for messages) and as numbers. */
  public record ContainerAsk(Map<String, Quantity> limits, Map<String, Quantity> requests) {}

  /** One compared quantity that differs between two asks. */
  public record Difference(String container, String field, String resource, Optional<Quantity> mine, Optional<Quantity> theirs) {}

  public static ResourceAsk of(Pod pod) {
    var containers = new LinkedHashMap<String, ContainerAsk>();
    for (Container c : PodResources.allContainers(pod)) {
      var r = c.getResources();
      containers.put(
          c.getName(),
          new ContainerAsk(compared(r == null ? null : r.getLimits()), compared(r == null ? null : r.getRequests())));
    }
    return new ResourceAsk(containers);
  }

  /** The first difference from {@code other}, containers in this pod's order, limits first. */
  public Optional<Difference> firstDifference(ResourceAsk other) {
    for (var entry : containers.entrySet()) {
      var theirs = other.containers.get(entry.getKey());
      if (theirs == null) {
        return Optional.of(new Difference(entry.getKey(), "container", "", Optional.empty(), Optional.empty()));
      }
      var d = differ(entry.getKey(), "limits", entry.getValue().limits(), theirs.limits());
      if (d.isEmpty()) {
        d = differ(entry.getKey(), "requests", entry.getValue().requests(), theirs.requests());
      }
      if (d.isPresent()) {
        return d;
      }
    }
    for (var name : other.containers.keySet()) {
      if (!containers.containsKey(name)) {
        return Optional.of(new Difference(name, "missing-container", "", Optional.empty(), Optional.empty()));
      }
    }
    return Optional.empty();
  }

  private static Optional<Difference> differ(
      String container, String field, Map<String, Quantity> mine, Map<String, Quantity> theirs) {
    for (var resource : COMPARED) {
      var a = Optional.ofNullable(mine.get(resource));
      var b = Optional.ofNullable(theirs.get(resource));
      if (!equal(a, b)) {
        return Optional.of(new Difference(container, field, resource, a, b));
      }
    }
    return Optional.empty();
  }

  private static boolean equal(Optional<Quantity> a, Optional<Quantity> b) {
    if (a.isEmpty() || b.isEmpty()) {
      return a.isEmpty() && b.isEmpty();
    }
    return amount(a.get()).compareTo(amount(b.get())) == 0;
  }

  private static BigDecimal amount(Quantity q) {
    return QuantitySyntax.amount(q);
  }

  private static Map<String, Quantity> compared(Map<String, Quantity> quantities) {
    var out = new LinkedHashMap<String, Quantity>();
    if (quantities != null) {
      for (var name : COMPARED) {
        if (quantities.containsKey(name)) {
          out.put(name, quantities.get(name));
        }
      }
    }
    return out;
  }
}
