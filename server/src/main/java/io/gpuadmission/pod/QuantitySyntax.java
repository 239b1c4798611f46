package io.gpuadmission.pod;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.quantity.KubeQuantity;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Resource quantities that are not Kubernetes quantities ({@code "lots"}). kube-apiserver cannot
 * even decode a pod or node holding one, so such an object comes only from another client: it is
 * refused saying which container or field, resource and value, before any rule reads it as a number.
 */
public final class QuantitySyntax {
  private static final BigDecimal LARGEST = BigDecimal.valueOf(Long.MAX_VALUE);

  private QuantitySyntax() {}

  /**
   * The amount, read as kube-apiserver reads it: fabric8's own reading fails on some strings it
   * accepts ({@code " 2 "}, {@code "Ki"}, {@code "-"}). Any other string keeps fabric8's error;
   * {@link #problem} refuses such a pod before rules read it. Capped at ±(2^63-1).
   */
  public static BigDecimal amount(Quantity quantity) {
    var amount = KubeQuantity.parseJsonValue(quantity.toString()).orElseGet(quantity::getNumericalAmount);
    // A valid 1e2000000000 would cost the rules' intValue() a number of two billion digits: beyond
    // what an int64 (kube-scheduler's view of a resource) holds, it is read as the largest one.
    return amount.abs().compareTo(LARGEST) <= 0 ? amount : amount.signum() < 0 ? LARGEST.negate() : LARGEST;
  }

  /**
   * The first of a node's quantities (status.capacity, then status.allocatable) that is not one,
   * said in a sentence; empty when all are. Only a Node kube-scheduler did not send (ExtenderArgs
   * with nodeCacheCapable false, a file given to the command line) can hold one.
   */
  public static Optional<String> problem(Node node) {
    if (node == null || node.getStatus() == null) {
      return Optional.empty();
    }
    return invalid(node.getStatus().getCapacity(), "status.capacity").or(() -> invalid(node.getStatus().getAllocatable(), "status.allocatable"));
  }

  /** The first quantity of the pod's containers that is not one, said in a sentence; empty when all are. */
  public static Optional<String> problem(Pod pod) {
    if (pod == null || pod.getSpec() == null) {
      return Optional.empty();
    }
    var spec = pod.getSpec();
    return first(spec.getInitContainers(), "init container")
        .or(() -> first(spec.getContainers(), "container"))
        .or(() -> invalid(spec.getOverhead(), "spec.overhead"));
  }

  private static Optional<String> first(List<Container> containers, String kind) {
    if (containers == null) {
      return Optional.empty();
    }
    for (var container : containers) {
      if (container == null || container.getResources() == null) {
        continue;
      }
      var where = kind + " \"" + container.getName() + "\": resources.";
      var bad = invalid(container.getResources().getLimits(), where + "limits")
          .or(() -> invalid(container.getResources().getRequests(), where + "requests"));
      if (bad.isPresent()) {
        return bad;
      }
    }
    return Optional.empty();
  }

  private static Optional<String> invalid(Map<String, Quantity> quantities, String where) {
    if (quantities == null) {
      return Optional.empty();
    }
    for (var entry : quantities.entrySet()) {
      var text = entry.getValue() == null ? "" : entry.getValue().toString();
      if (KubeQuantity.parseJsonValue(text).isEmpty()) {
        return Optional.of(where + "[\"" + entry.getKey() + "\"] is \"" + text + "\", not a quantity (" + KubeQuantity.VALID + ")");
      }
    }
    return Optional.empty();
  }
}
