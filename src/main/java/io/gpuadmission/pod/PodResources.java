package io.gpuadmission.pod;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/** Reads the resources a pod's containers (init containers included) ask for. */
public final class PodResources {
  private PodResources() {}

  /** Regular and init containers: both are scheduled against node capacity. */
  public static List<Container> allContainers(Pod pod) {
    var spec = pod.getSpec();
    var all = new ArrayList<Container>();
    if (spec != null) {
      if (spec.getInitContainers() != null) {
        all.addAll(spec.getInitContainers());
      }
      if (spec.getContainers() != null) {
        all.addAll(spec.getContainers());
      }
    }
    return all;
  }

  /** True when any container names a matching resource in its limits or requests. */
  public static boolean asksFor(Pod pod, Predicate<String> resourceName) {
    for (var container : allContainers(pod)) {
      var resources = container.getResources();
      if (resources != null
          && (anyKey(resources.getLimits(), resourceName)
              || anyKey(resources.getRequests(), resourceName))) {
        return true;
      }
    }
    return false;
  }

  public static boolean asksFor(Pod pod, String resourceName) {
    return asksFor(pod, resourceName::equals);
  }

  /**
   * The amount of {@code resourceName} the pod asks, summed over regular containers from their
   * limits (as gpushare counts {@code aliyun.com/gpu-mem}), falling back to requests.
   */
  public static BigDecimal limitSum(Pod pod, String resourceName) {
    var sum = BigDecimal.ZERO;
    if (pod.getSpec() == null || pod.getSpec().getContainers() == null) {
      return sum;
    }
    for (var container : pod.getSpec().getContainers()) {
      sum = sum.add(amount(container, resourceName));
    }
    return sum;
  }

  /** What one container asks of {@code resourceName}: its limit, else its request, else 0. */
  public static BigDecimal amount(Container container, String resourceName) {
    var resources = container.getResources();
    if (resources == null) {
      return BigDecimal.ZERO;
    }
    var q = quantity(resources.getLimits(), resourceName);
    if (q == null) {
      q = quantity(resources.getRequests(), resourceName);
    }
    return q == null ? BigDecimal.ZERO : q.getNumericalAmount();
  }

  private static Quantity quantity(Map<String, Quantity> map, String name) {
    return map == null ? null : map.get(name);
  }

  private static boolean anyKey(Map<String, Quantity> map, Predicate<String> test) {
    if (map == null) {
      return false;
    }
    for (var key : map.keySet()) {
      if (test.test(key)) {
        return true;
      }
    }
    return false;
  }
}
