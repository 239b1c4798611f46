package io.gpuadmission.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.validation.WorkloadKind;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The pods the admitted objects of the input make, as they will be created: a Pod after /mutate,
 * and for a workload each template's replicas after /mutate. Named as their controllers name them
 * where that is fixed ({@code <statefulset>-0}, {@code <job>-worker-0} for training jobs), else
 * {@code <workload>-<n>} for the random suffix a Deployment or Job would give.
 */
final class PodsOfInput {
  private PodsOfInput() {}

  /** A pod and the object it comes from. */
  record Made(Pod pod, Explanation from) {}

  static List<Made> of(List<Explanation> explanations, Instant now) {
    var out = new ArrayList<Made>();
    var sequence = 0;
    for (var e : explanations) {
      if (e.verdict() != Verdict.ADMITTED) {
        continue;
      }
      var manifest = e.manifest();
      if (manifest.isCore("Pod")) {
        out.add(new Made(pod(e.result(), manifest.name(), ++sequence, now), e));
        continue;
      }
      var kind = WorkloadKind.of(manifest.group(), manifest.kind());
      if (kind.isEmpty()) {
        continue;
      }
      for (var template : e.templates()) {
        for (int i = 0; i < template.replicas(); i++) {
          var name = kind.get().trainingJob()
              ? manifest.name() + "-" + template.role().toLowerCase(Locale.ROOT) + "-" + i
              : manifest.name() + "-" + i;
          out.add(new Made(pod(template.pod(), name, ++sequence, now), e));
        }
      }
    }
    return out;
  }

  /** The object as the API server creates it: a name, a UID, a creation time, no generateName. */
  private static Pod pod(JsonNode object, String name, int sequence, Instant now) {
    var copy = (ObjectNode) object.deepCopy();
    var metadata = copy.path("metadata").isObject() ? (ObjectNode) copy.get("metadata") : copy.putObject("metadata");
    metadata.put("name", name);
    metadata.remove("generateName");
    if (!metadata.path("uid").isTextual()) {
      metadata.put("uid", "gpu-admission-cli-pod-" + sequence);
    }
    metadata.put("creationTimestamp", now.toString());
    try {
      return KubernetesJson.mapper().treeToValue(copy, Pod.class);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("an admitted pod reads as a Pod: " + e.getOriginalMessage(), e);
    }
  }
}
