package io.gpuadmission.pod;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Resource quantities that are not Kubernetes quantities ({@code "lots"}). kube-apiserver cannot
 * even decode a pod holding one, so such a pod comes only from another client: it is refused
 * saying which container, resource and value, before any rule reads it as a number.
 */
public final class QuantitySyntax {
  /** apimachinery's resource.Quantity: a signed decimal, then a binary or decimal SI suffix or an exponent. */
  private static final Pattern QUANTITY =
      Pattern.compile("[+-]?(\\d+(\\.\\d*)?|\\.\\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\\d+)?");
  static final String VALID = "a quantity is a number with an optional suffix, such as 2, 500m, 16Gi or 1e3";

  private QuantitySyntax() {}

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
      if (!QUANTITY.matcher(text).matches()) {
        return Optional.of(where + "[\"" + entry.getKey() + "\"] is \"" + text + "\", not a quantity (" + VALID + ")");
      }
    }
    return Optional.empty();
  }
}
