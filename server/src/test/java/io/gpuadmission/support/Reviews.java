package io.gpuadmission.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpuadmission.admission.KubernetesJson;

/** Wraps an object into an AdmissionReview request as kube-apiserver sends it. */
public final class Reviews {
  private Reviews() {}

  public static String create(String uid, JsonNode object) {
    return of(uid, "CREATE", object, false);
  }

  /** An UPDATE from {@code oldObject} to {@code object}. */
  public static String update(String uid, JsonNode oldObject, JsonNode object) {
    var review = (ObjectNode) read(of(uid, "UPDATE", object, false));
    ((ObjectNode) review.path("request")).set("oldObject", oldObject);
    return review.toString();
  }

  private static JsonNode read(String json) {
    try {
      return KubernetesJson.mapper().readTree(json);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  public static String of(String uid, String operation, JsonNode object, boolean dryRun) {
    var mapper = KubernetesJson.mapper();
    var apiVersion = object.path("apiVersion").asText();
    var group = apiVersion.contains("/") ? apiVersion.substring(0, apiVersion.indexOf('/')) : "";
    var version = apiVersion.contains("/") ? apiVersion.substring(apiVersion.indexOf('/') + 1) : apiVersion;
    var kind = object.path("kind").asText();
    var gvk = mapper.createObjectNode().put("group", group).put("version", version).put("kind", kind);
    var gvr = mapper.createObjectNode().put("group", group).put("version", version).put("resource", kind.toLowerCase() + "s");
    ObjectNode request = mapper.createObjectNode();
    request.put("uid", uid);
    request.set("kind", gvk);
    request.set("resource", gvr);
    request.set("requestKind", gvk);
    request.set("requestResource", gvr);
    request.put("name", object.path("metadata").path("name").asText(""));
    request.put("namespace", object.path("metadata").path("namespace").asText(""));
    request.put("operation", operation);
    request.set("userInfo", mapper.createObjectNode().put("username", "kubernetes-admin"));
    request.set("object", object);
    request.put("dryRun", dryRun);
    var review = mapper.createObjectNode();
    review.put("apiVersion", "admission.k8s.io/v1");
    review.put("kind", "AdmissionReview");
    review.set("request", request);
    return review.toString();
  }
}
