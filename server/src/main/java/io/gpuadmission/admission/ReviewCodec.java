package io.gpuadmission.admission;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.TokenBuffer;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReview;
import java.io.IOException;
import java.util.Locale;

/** Reads AdmissionReview requests and writes AdmissionReview responses (admission.k8s.io/v1). */
public final class ReviewCodec {
  public static final String API_VERSION = "admission.k8s.io/v1";
  private static final ObjectMapper MAPPER = KubernetesJson.mapper();

  private ReviewCodec() {}

  /**
   * Parses the body once: the review's envelope and request fields as small trees, the request's
   * {@code object} and {@code oldObject} as their places in the body, which each endpoint maps to
   * its own type.
   */
  public static DecodedReview decode(byte[] body) throws MalformedReviewException {
    if (body == null || body.length == 0) {
      throw new MalformedReviewException("empty body: expected an AdmissionReview (" + API_VERSION + ")");
    }
    var review = new WireReview(body);
    try (var parser = MAPPER.createParser(body)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        // Not an object: readTree tells a syntax error from a well-formed non-object, as ever.
        MAPPER.readTree(body);
        throw new MalformedReviewException("body is not a JSON object: expected an AdmissionReview");
      }
      review.read(parser);
    } catch (JsonProcessingException e) {
      throw new MalformedReviewException("body is " + JsonProblem.describe(e, "an AdmissionReview object", ""));
    } catch (IOException e) {
      throw new MalformedReviewException("body is not JSON: " + firstLine(e.getMessage()));
    }
    var envelope = review.envelope;
    if (!"AdmissionReview".equals(envelope.path("kind").asText())) {
      throw new MalformedReviewException("kind is \"" + envelope.path("kind").asText() + "\": expected AdmissionReview");
    }
    if (!API_VERSION.equals(envelope.path("apiVersion").asText())) {
      throw new MalformedReviewException(
          "apiVersion is \"" + envelope.path("apiVersion").asText() + "\": this webhook serves " + API_VERSION
              + " (set admissionReviewVersions: [v1])");
    }
    if (review.request == null) {
      throw new MalformedReviewException("AdmissionReview has no request");
    }
    if (review.uidToken != null && review.uidToken != JsonToken.VALUE_NULL && review.uidToken != JsonToken.VALUE_STRING) {
      // Jackson would coerce a number or boolean to a string; the API server sends a UID string.
      throw new MalformedReviewException("request.uid is " + typeName(review.uidToken) + ": expected a string");
    }
    AdmissionRequest request;
    try (var fields = review.request.asParser(MAPPER)) {
      request = MAPPER.readValue(fields, AdmissionRequest.class);
    } catch (JsonProcessingException e) {
      // Where in the request: the tokens were copied out of the body, so their lines are not the body's.
      var problem = JsonProblem.describe(e, "an AdmissionRequest object", "request");
      var at = JsonProblem.at(e.getLocation());
      throw new MalformedReviewException("request is malformed: "
          + (at.isEmpty() || !problem.endsWith(at) ? problem : problem.substring(0, problem.length() - at.length())));
    } catch (IOException e) {
      throw new IllegalStateException("tokens in memory always read", e);
    }
    if (request.getUid() == null || request.getUid().isBlank()) {
      throw new MalformedReviewException("request.uid is missing");
    }
    var operation = request.getOperation();
    if (review.object == null && ("CREATE".equals(operation) || "UPDATE".equals(operation))) {
      // kube-apiserver always sends the object being created or updated; without it nothing can be judged.
      throw new MalformedReviewException("request.object is missing: a " + operation + " review carries the object");
    }
    return new DecodedReview(request, review.object, review.oldObject);
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

  /**
   * The review read in one pass: the envelope's fields as a small tree, the request's fields but
   * its objects as tokens (mapped to an AdmissionRequest without a tree in between), the objects
   * skipped over. The last of repeated keys wins, as in a tree.
   */
  private static final class WireReview {
    final byte[] body;
    final ObjectNode envelope = MAPPER.createObjectNode();
    TokenBuffer request;
    JsonToken uidToken;
    ReviewObject object;
    ReviewObject oldObject;

    WireReview(byte[] body) {
      this.body = body;
    }

    void read(JsonParser parser) throws IOException {
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        var name = parser.currentName();
        var token = parser.nextToken();
        if (name.equals("request") && token == JsonToken.START_OBJECT) {
          readRequest(parser);
        } else {
          if (name.equals("request")) {
            request = null;
          }
          JsonNode value = MAPPER.readTree(parser);
          envelope.set(name, value == null ? NullNode.getInstance() : value);
        }
      }
    }

    private void readRequest(JsonParser parser) throws IOException {
      request = new TokenBuffer(parser);
      request.writeStartObject();
      uidToken = null;
      object = null;
      oldObject = null;
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        var name = parser.currentName();
        var token = parser.nextToken();
        switch (name) {
          case "object" -> object = token == JsonToken.VALUE_NULL ? null : ReviewObject.of(parser, body, MAPPER);
          case "oldObject" -> oldObject = token == JsonToken.VALUE_NULL ? null : ReviewObject.of(parser, body, MAPPER);
          default -> {
            uidToken = name.equals("uid") ? token : uidToken;
            request.writeFieldName(name);
            request.copyCurrentStructure(parser);
          }
        }
      }
      request.writeEndObject();
    }
  }

  /** A JSON value's type as a tree names it ({@code number}, {@code boolean}, ...). */
  private static String typeName(JsonToken token) {
    return switch (token) {
      case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "number";
      case VALUE_TRUE, VALUE_FALSE -> "boolean";
      case START_OBJECT -> "object";
      case START_ARRAY -> "array";
      default -> token.name().toLowerCase(Locale.ROOT);
    };
  }

  private static String firstLine(String text) {
    if (text == null) {
      return "";
    }
    var newline = text.indexOf('\n');
    return newline < 0 ? text : text.substring(0, newline);
  }
}
