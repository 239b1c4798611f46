package io.gpuadmission.admission;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;

/**
 * An AdmissionReview's request with its objects kept as JSON trees: each endpoint maps them to the
 * one type it judges, which avoids fabric8's polymorphic deserializer (slow on a cold JVM).
 */
public record DecodedReview(AdmissionRequest request, JsonNode object, JsonNode oldObject) {

  public String uid() {
    return request.getUid();
  }

  public String kind() {
    return request.getKind() == null ? "" : request.getKind().getKind();
  }

  public String group() {
    return request.getKind() == null || request.getKind().getGroup() == null ? "" : request.getKind().getGroup();
  }

  public String operation() {
    return request.getOperation() == null ? "" : request.getOperation();
  }

  public String namespace() {
    if (request.getNamespace() != null && !request.getNamespace().isEmpty()) {
      return request.getNamespace();
    }
    var fromObject = object == null ? null : object.path("metadata").path("namespace").asText(null);
    return fromObject == null ? "" : fromObject;
  }

  public boolean dryRun() {
    return Boolean.TRUE.equals(request.getDryRun());
  }

  /** A name for logs and messages: the object's name, else its generateName prefix. */
  public String objectName() {
    if (request.getName() != null && !request.getName().isEmpty()) {
      return request.getName();
    }
    var metadata = object == null ? null : object.path("metadata");
    if (metadata == null) {
      return "";
    }
    var name = metadata.path("name").asText("");
    return name.isEmpty() ? metadata.path("generateName").asText("") : name;
  }

  public boolean isCoreKind(String expected) {
    return group().isEmpty() && expected.equals(kind());
  }
}
