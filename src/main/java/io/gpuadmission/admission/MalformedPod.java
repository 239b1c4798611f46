package io.gpuadmission.admission;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.pod.NullListEntry;
import java.util.Optional;

/**
 * What makes a pod, or a workload's pod template, unreadable by the rules: no spec (and, for a
 * Pod, no metadata), or a null list entry. kube-apiserver never sends such a Pod (Go types cannot
 * hold one); a custom resource's template can still carry a null entry. Found before any rule
 * runs and refused saying where, instead of failing inside a rule.
 */
final class MalformedPod {
  private MalformedPod() {}

  /** The problem with a Pod object, or empty when the rules can read it. */
  static Optional<String> pod(JsonNode pod) {
    if (!pod.path("metadata").isObject()) {
      return Optional.of(missing("metadata"));
    }
    return template(pod, "");
  }

  /** The problem with a pod template at {@code path} (a Pod itself: ""), or empty. */
  static Optional<String> template(JsonNode template, String path) {
    var spec = path.isEmpty() ? "spec" : path + ".spec";
    if (!template.path("spec").isObject()) {
      return Optional.of(missing(spec));
    }
    return NullListEntry.find(template, path).map(NullListEntry::problem);
  }

  private static String missing(String where) {
    return where + " is missing or not an object: a pod cannot be judged without it";
  }
}
