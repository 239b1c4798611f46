package io.gpuadmission.admission;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.pod.NullListEntry;
import java.util.Optional;

/**
 * What makes a pod, or a workload's pod template, unreadable by the rules: no spec (and, for a
 * Pod, no metadata), or a null list entry. kube-apiserver never sends such a Pod (Go types cannot
 * hold one); a custom resource's template can still carry a null entry. Found before any rule
 * runs and refused saying where, instead of failing inside a rule. A review's Pod is checked on
 * what the decoder noted while skipping it ({@link ObjectOutline}): no tree, no pass of its own.
 */
final class MalformedPod {
  private MalformedPod() {}

  /** The problem with a review's Pod, or empty when the rules can read it. */
  static Optional<String> pod(ReviewObject pod) {
    var outline = pod.outline();
    if (!outline.object()) {
      return Optional.of(missing("request.object"));
    }
    if (!outline.metadata() || !outline.spec()) {
      return Optional.of(missing(outline.metadata() ? "spec" : "metadata"));
    }
    return outline.nullListEntry().map(NullListEntry::problem);
  }

  /** The problem with a workload's pod template at {@code path}, or empty. */
  static Optional<String> template(JsonNode template, String path) {
    if (!template.path("spec").isObject()) {
      return Optional.of(missing(path + ".spec"));
    }
    return NullListEntry.find(template, path).map(NullListEntry::problem);
  }

  private static String missing(String where) {
    return where + " is missing or not an object: a pod cannot be judged without it";
  }
}
