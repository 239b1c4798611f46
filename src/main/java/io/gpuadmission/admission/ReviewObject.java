package io.gpuadmission.admission;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.util.TokenBuffer;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * An object of an AdmissionReview as the tokens read off the wire, so the body is parsed once: an
 * endpoint maps it straight to the one type it judges (a Pod) without a JSON tree in between, or
 * reads it as a tree (workloads, ConfigMaps, failure paths), built at most once.
 */
public final class ReviewObject {
  private final ObjectMapper mapper;
  private final TokenBuffer tokens;
  // One request is served by one thread from start to end: a plain field is enough.
  private JsonNode tree;

  private ReviewObject(ObjectMapper mapper, TokenBuffer tokens) {
    this.mapper = mapper;
    this.tokens = tokens;
  }

  /** Copies the value at the parser's current token (the parser moves past it). */
  static ReviewObject copyOf(JsonParser parser, ObjectMapper mapper) throws IOException {
    return new ReviewObject(mapper, TokenBuffer.asCopyOfValue(parser));
  }

  public JsonNode tree() {
    if (tree == null) {
      try (var parser = tokens.asParser(mapper)) {
        tree = mapper.readTree(parser);
      } catch (IOException e) {
        throw new UncheckedIOException("tokens already parsed once cannot fail to build a tree", e);
      }
    }
    return tree;
  }

  /** A parser over the tokens, for a streaming look that builds neither a tree nor a type. */
  JsonParser parser() {
    return tokens.asParser(mapper);
  }

  /**
   * A new {@code type} on each call, so the caller may edit it. A value that does not map throws
   * IllegalArgumentException, as {@link ObjectMapper#convertValue} does.
   */
  public <T> T as(Class<T> type) {
    try (var parser = tokens.asParser(mapper)) {
      return mapper.readValue(parser, type);
    } catch (IOException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }
}
