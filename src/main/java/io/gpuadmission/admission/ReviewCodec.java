package io.gpuadmission.admission;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReview;
import java.io.IOException;

/** Reads AdmissionReview requests and writes AdmissionReview responses (admission.k8s.io/v1). */
public final class ReviewCodec {
  public static final String API_VERSION = "admission.k8s.io/v1";
  private static final ObjectMapper MAPPER = KubernetesJson.mapper();

  private ReviewCodec() {}

  public static DecodedReview decode(byte[] body) throws MalformedReviewException {
    if (body == null || body.length == 0) {
      throw new MalformedReviewException("empty body: expected an AdmissionReview (" + API_VERSION + ")");
    }
    JsonNode tree;
    try {
      tree = MAPPER.readTree(body);
    } catch (IOException e) {
      var detail = e instanceof JsonProcessingException p ? p.getOriginalMessage() : e.getMessage();
      throw new MalformedReviewException("body is not JSON: " + firstLine(detail));
    }
    if (tree == null || !tree.isObject()) {
      throw new MalformedReviewException("body is not a JSON object: expected an AdmissionReview");
    }
    if (!"AdmissionReview".equals(tree.path("kind").asText())) {
      throw new MalformedReviewException("kind is \"" + tree.path("kind").asText() + "\": expected AdmissionReview");
    }
    if (!API_VERSION.equals(tree.path("apiVersion").asText())) {
      throw new MalformedReviewException(
          "apiVersion is \"" + tree.path("apiVersion").asText() + "\": this webhook serves " + API_VERSION
              + " (set admissionReviewVersions: [v1])");
    }
    var requestNode = tree.path("request");
    if (!requestNode.isObject()) {
      throw new MalformedReviewException("AdmissionReview has no request");
    }
    var requestTree = (ObjectNode) requestNode.deepCopy();
    var object = requestTree.remove("object");
    var oldObject = requestTree.remove("oldObject");
    AdmissionRequest request;
    try {
      request = MAPPER.treeToValue(requestTree, AdmissionRequest.class);
    } catch (JsonProcessingException e) {
      throw new MalformedReviewException("request is malformed: " + firstLine(e.getOriginalMessage()));
    }
    if (request.getUid() == null || request.getUid().isBlank()) {
      throw new MalformedReviewException("request.uid is missing");
    }
    return new DecodedReview(request, nullIfJsonNull(object), nullIfJsonNull(oldObject));
  }

  public static byte[] encode(AdmissionResponse response) {
    var review = new AdmissionReview();
    review.setApiVersion(API_VERSION);
    review.setKind("AdmissionReview");
    review.setResponse(response);
    try {
      return MAPPER.writeValueAsBytes(review);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("an AdmissionReview always serializes", e);
    }
  }

  private static JsonNode nullIfJsonNull(JsonNode node) {
    return node == null || node.isNull() || node.isMissingNode() ? null : node;
  }

  private static String firstLine(String text) {
    if (text == null) {
      return "";
    }
    var newline = text.indexOf('\n');
    return newline < 0 ? text : text.substring(0, newline);
  }
}
