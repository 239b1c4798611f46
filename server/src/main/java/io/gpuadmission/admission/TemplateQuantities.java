package io.gpuadmission.admission;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.quantity.KubeQuantity;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Resource quantities in a workload's pod template that are no quantities ({@code "lots"}, {@code
 * "1e3k"}): named from the object's root ({@code spec.template.spec.containers[0].resources.limits}),
 * as a Pod's are named by container, so that a template gets the same 400 as a Pod rather than
 * reaching the rules, which read quantities as numbers. kube-apiserver decodes a built-in workload
 * before calling the webhook and never sends one; a custom resource's template (PyTorchJob) is
 * only checked against its CRD's schema, which may leave resources open.
 */
final class TemplateQuantities {
  private TemplateQuantities() {}

  /** The first quantity of the template at {@code path} that is no quantity, said in a sentence; empty when all are. */
  static Optional<String> problem(PodTemplateSpec template, String path) {
    var spec = template == null ? null : template.getSpec();
    if (spec == null) {
      return Optional.empty();
    }
    return first(spec.getInitContainers(), path + ".spec.initContainers", "init container")
        .or(() -> first(spec.getContainers(), path + ".spec.containers", "container"))
        .or(() -> invalid(spec.getOverhead(), path + ".spec.overhead", ""));
  }

  private static Optional<String> first(List<Container> containers, String list, String kind) {
    if (containers == null) {
      return Optional.empty();
    }
    for (int i = 0; i < containers.size(); i++) {
      var container = containers.get(i);
      if (container == null || container.getResources() == null) {
        continue;
      }
      var where = list + "[" + i + "].resources.";
      var whose = " of " + kind + " \"" + container.getName() + "\"";
      var bad = invalid(container.getResources().getLimits(), where + "limits", whose)
          .or(() -> invalid(container.getResources().getRequests(), where + "requests", whose));
      if (bad.isPresent()) {
        return bad;
      }
    }
    return Optional.empty();
  }

  private static Optional<String> invalid(Map<String, Quantity> quantities, String where, String whose) {
    if (quantities == null) {
      return Optional.empty();
    }
    for (var entry : quantities.entrySet()) {
      var text = entry.getValue() == null ? "" : entry.getValue().toString();
      if (KubeQuantity.parseJsonValue(text).isEmpty()) {
        return Optional.of(where + "[\"" + entry.getKey() + "\"]" + whose + " is \"" + text + "\", not a quantity (" + KubeQuantity.VALID + ")");
      }
    }
    return Optional.empty();
  }
}
