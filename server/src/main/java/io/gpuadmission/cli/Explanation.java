package io.gpuadmission.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import java.util.List;
import java.util.Optional;

/**
 * What the webhook does with one object: /mutate's answer and its patch (pods only: the API
 * server sends nothing else to /mutate), /validate's answer, for a workload what each template's
 * pods will get, and the object as it would be stored.
 *
 * @param note why the object was not judged, or ""
 * @param result the object after /mutate (pods), or with its templates as their pods will be
 *     (workloads); the object itself otherwise
 */
record Explanation(
    Manifest manifest,
    String namespace,
    Verdict verdict,
    String note,
    Optional<AdmissionResponse> mutate,
    ArrayNode patch,
    Optional<AdmissionResponse> validate,
    List<TemplateChange> templates,
    JsonNode result) {

  /**
   * The pods of one template: how many, where the template sits, the patch /mutate gives each, and
   * the pod each will be after it (namespace and owner set, no name yet).
   */
  record TemplateChange(String role, int replicas, String path, ArrayNode patch, JsonNode pod) {}

  /** The refusal's message, from whichever endpoint refused. */
  Optional<AdmissionResponse> refusal() {
    if (mutate.isPresent() && !Boolean.TRUE.equals(mutate.get().getAllowed())) {
      return mutate;
    }
    return validate.filter(v -> !Boolean.TRUE.equals(v.getAllowed()));
  }
}
