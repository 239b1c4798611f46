package io.gpuadmission.admission;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;

/**
 * An AdmissionReview's request with its objects kept as read off the wire: each endpoint maps them
 * to the one type it judges, which avoids fabric8's polymorphic deserializer (slow on a cold JVM)
 * and a JSON tree nobody needs.
 */
public final class DecodedReview {
  private final AdmissionRequest request;
  private final ReviewObject object;
  private final ReviewObject oldObject;

  DecodedReview(AdmissionRequest request, ReviewObject object, ReviewObject oldObject) {
    this.request = request;
    this.object = object;
    this.oldObject = oldObject;
  }

  public AdmissionRequest request() {
    return request;
  }

  public boolean hasObject() {
    return object != null;
  }

  /** The object as a JSON tree, or null when the review has none. */
  public JsonNode object() {
    return object == null ? null : object.tree();
  }

  /** The object as read off the wire (tokens), or null when the review has none. */
  ReviewObject rawObject() {
    return object;
  }

  /** The old object (UPDATE, DELETE) as a JSON tree, or null when the review has none. */
  public JsonNode oldObject() {
    return oldObject == null ? null : oldObject.tree();
  }

  /**
   * The object as a new Pod on each call (the caller may edit it). Throws IllegalArgumentException
   * when there is none, {@link MalformedObjectException} when its fields have the wrong types.
   */
  public Pod pod() {
    if (object == null) {
      throw new IllegalArgumentException("the review has no object");
    }
    return object.as(Pod.class, objectName());
  }

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
    var fromObject = object == null ? null : object().path("metadata").path("namespace").asText(null);
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
    var metadata = object == null ? null : object().path("metadata");
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
