package io.gpuadmission.fuzz;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import io.fabric8.zjsonpatch.JsonPatch;
import io.gpuadmission.admission.DecodedReview;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.admission.MalformedObjectException;
import io.gpuadmission.admission.MalformedReviewException;
import io.gpuadmission.admission.ReviewCodec;
import io.gpuadmission.validation.WorkloadKind;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.function.Function;

/**
 * The contract every answer keeps: a 400 with a reason, or a 200 AdmissionReview that echoes the
 * uid, says allowed or not, gives a refusal a message, and carries a patch that applies.
 */
final class AnswerCheck {
  private AnswerCheck() {}

  /** What the HTTP layer would answer, computed in-process; throws on a broken contract. */
  static String inProcess(byte[] body, Function<DecodedReview, AdmissionResponse> service) {
    DecodedReview decoded;
    try {
      decoded = ReviewCodec.decode(body);
    } catch (MalformedReviewException e) {
      require(e.getMessage() != null && !e.getMessage().isBlank(), "400 without a reason");
      return "400";
    }
    require(
        judgeable(body),
        "the decoder accepted a body that is not JSON or names no request uid: "
            + new String(body, 0, Math.min(body.length, 200), StandardCharsets.UTF_8));
    AdmissionResponse answer;
    try {
      answer = service.apply(decoded);
    } catch (MalformedObjectException e) {
      require(malformedObject(decoded), "a 400 for an object that maps to its type: " + e.getMessage());
      require(e.getMessage() != null && !e.getMessage().isBlank(), "400 without a reason");
      return "400";
    }
    return answer200(ReviewCodec.encode(answer), decoded);
  }

  /**
   * Whether the review's object is a Pod, or a workload with a pod template, whose fields have the
   * wrong types (which the endpoints answer with a 400).
   */
  static boolean malformedObject(DecodedReview decoded) {
    if (!decoded.hasObject()) {
      return false;
    }
    if (!decoded.isCoreKind("Pod")) {
      return malformedTemplate(decoded);
    }
    try {
      decoded.pod();
      return false;
    } catch (MalformedObjectException e) {
      return true;
    } catch (RuntimeException other) {
      return false;
    }
  }

  private static boolean malformedTemplate(DecodedReview decoded) {
    var kind = WorkloadKind.of(decoded.group(), decoded.kind());
    if (kind.isEmpty()) {
      return false;
    }
    try {
      for (var template : kind.get().templates(decoded.object())) {
        KubernetesJson.mapper().treeToValue(template.template(), PodTemplateSpec.class);
      }
      return false;
    } catch (JsonProcessingException e) {
      return true;
    } catch (RuntimeException other) {
      return false;
    }
  }

  /**
   * Decided without the decoder under test: only a JSON object whose request carries a uid string
   * can be answered with a 200, since the answer must echo that uid.
   */
  static boolean judgeable(byte[] body) {
    try {
      var tree = KubernetesJson.mapper().readTree(body);
      var uid = tree == null ? null : tree.path("request").path("uid");
      return uid != null && uid.isTextual() && !uid.asText().isEmpty();
    } catch (IOException | RuntimeException notJson) {
      return false;
    }
  }

  /** The uid a 200 must echo, or null when the body must get a 400. */
  static DecodedReview expected(byte[] body) {
    try {
      return ReviewCodec.decode(body);
    } catch (MalformedReviewException e) {
      return null;
    }
  }

  static String answer200(byte[] encoded, DecodedReview decoded) {
    var review = read(encoded);
    require(ReviewCodec.API_VERSION.equals(review.path("apiVersion").asText()), "apiVersion missing: " + review);
    require("AdmissionReview".equals(review.path("kind").asText()), "kind missing: " + review);
    var response = review.path("response");
    require(response.path("uid").asText().equals(decoded.uid()), "uid not echoed: " + response.path("uid"));
    require(response.path("allowed").isBoolean(), "allowed missing: " + response);
    if (!response.path("allowed").asBoolean()) {
      require(!response.path("status").path("message").asText().isBlank(), "refusal without a message: " + response);
      return "200 denied";
    }
    if (response.has("patch")) {
      var patch = read(Base64.getDecoder().decode(response.path("patch").asText()));
      require(decoded.object() != null, "patch for a review without an object");
      JsonPatch.apply(patch, decoded.object());
      return "200 patched";
    }
    return "200 allowed";
  }

  static JsonNode read(byte[] json) {
    try {
      return KubernetesJson.mapper().readTree(json);
    } catch (IOException e) {
      throw new AssertionError("answer is not JSON: " + new String(json, StandardCharsets.UTF_8), e);
    }
  }

  private static void require(boolean condition, String problem) {
    if (!condition) {
      throw new AssertionError(problem);
    }
  }
}
