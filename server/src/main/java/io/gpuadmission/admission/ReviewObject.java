package io.gpuadmission.admission;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * An object of an AdmissionReview as its place in the request body: the decoder only skips over
 * it, so nothing of it is copied until an endpoint maps those bytes straight to the one type it
 * judges (a Pod), or reads them as a tree (workloads, ConfigMaps, failure paths), built at most
 * once. A value that is not an object or array (only in a malformed review) is kept as a tree.
 * While skipping it, the decoder notes its {@link ObjectOutline} (what {@link MalformedPod} checks).
 */
public final class ReviewObject {
  private final ObjectMapper mapper;
  private final byte[] body;
  private final int offset;
  private final int length;
  private final ObjectOutline outline;
  // One request is served by one thread from start to end: a plain field is enough.
  private JsonNode tree;

  private ReviewObject(ObjectMapper mapper, byte[] body, int offset, int length, ObjectOutline outline, JsonNode tree) {
    this.mapper = mapper;
    this.body = body;
    this.offset = offset;
    this.length = length;
    this.outline = outline;
    this.tree = tree;
  }

  /**
   * The value at the parser's current token, which reads {@code body} from its first byte; the
   * parser moves past it (and still reports bad JSON in it).
   */
  static ReviewObject of(JsonParser parser, byte[] body, ObjectMapper mapper) throws IOException {
    if (!parser.currentToken().isStructStart()) {
      return new ReviewObject(mapper, null, 0, 0, ObjectOutline.NOT_AN_OBJECT, mapper.readTree(parser));
    }
    var start = parser.currentTokenLocation().getByteOffset();
    var outline = ObjectOutline.read(parser);
    var end = parser.currentTokenLocation().getByteOffset() + 1;
    return new ReviewObject(mapper, body, (int) start, (int) (end - start), outline, null);
  }

  ObjectOutline outline() {
    return outline;
  }

  public JsonNode tree() {
    if (tree == null) {
      try {
        tree = mapper.readTree(body, offset, length);
      } catch (IOException e) {
        throw new UncheckedIOException("bytes already parsed once cannot fail to build a tree", e);
      }
    }
    return tree;
  }

  /**
   * A new {@code type} on each call, so the caller may edit it. A value whose fields have the wrong
   * types throws {@link MalformedObjectException} saying where ({@code spec.hostIPC: expected true
   * or false, got the string "yes"}) about the object named {@code name}.
   */
  public <T> T as(Class<T> type, String name) {
    try {
      return body == null ? mapper.treeToValue(tree, type) : mapper.readValue(body, offset, length, type);
    } catch (JsonProcessingException e) {
      // Lines and columns would count from the object, not from the body: the path says where.
      var whole = "a" + ("AEIOU".indexOf(type.getSimpleName().charAt(0)) >= 0 ? "n " : " ") + type.getSimpleName() + " object";
      throw new MalformedObjectException(type.getSimpleName() + " \"" + name + "\": " + JsonProblem.describe(e, whole, "", false));
    } catch (IOException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }
}
