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
   * The pod's effective request of {@code resourceName}, as kube-scheduler reserves it on a node
   * (component-helpers {@code PodRequests}, after the sidecar KEP): the larger of (a) the regular
   * containers and the sidecar init containers ({@code restartPolicy: Always}, which run beside
   * them) summed, and (b) the largest need while init containers run, one at a time, each beside
   * the sidecars started before it. Each container counts its limit, else its request (GPU
   * resources are extended resources, whose request equals the limit; gpushare reads limits).
   * Every decision about what a pod holds (ledger, annotations, GPU count, feasibility) reads this.
   */
  public static BigDecimal effective(Pod pod, String resourceName) {
    var spec = pod.getSpec();
    if (spec == null) {
      return BigDecimal.ZERO;
    }
    var running = BigDecimal.ZERO;
    if (spec.getContainers() != null) {
      for (var container : spec.getContainers()) {
        running = running.add(amount(container, resourceName));
      }
    }
    var initPeak = BigDecimal.ZERO;
    if (spec.getInitContainers() != null) {
      var sidecars = BigDecimal.ZERO;
      for (var container : spec.getInitContainers()) {
        var own = amount(container, resourceName);
        if (isSidecar(container)) {
          running = running.add(own);
          sidecars = sidecars.add(own);
          initPeak = initPeak.max(sidecars);
        } else {
          initPeak = initPeak.max(own.add(sidecars));
        }
      }
    }
    return running.max(initPeak);
  }

  /** An init container that keeps running beside the regular ones (Kubernetes' sidecar). */
  public static boolean isSidecar(Container container) {
    return "Always".equals(container.getRestartPolicy());
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
    return q == null ? BigDecimal.ZERO : QuantitySyntax.amount(q);
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
