package io.gpuadmission.pod;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Optional;

/**
 * Finds a null entry in a list of an object read as JSON ({@code containers: [null]}, {@code env:
 * [null]}). Kubernetes' own types cannot hold one: Go decodes it as an empty struct, so neither
 * kube-apiserver nor kube-scheduler sends a Pod with one. The rules read every entry, so such an
 * object is refused before them, saying where the entry is, instead of failing inside a rule.
 * Reads tokens, so that a review's pod needs no JSON tree for it.
 */
public final class NullListEntry {
  private NullListEntry() {}

  /** Where the first null list entry of {@code tree} is, as {@code prefix.spec.containers[0]}; empty when none. */
  public static Optional<String> find(JsonNode tree, String prefix) {
    if (tree == null) {
      return Optional.empty();
    }
    try (var parser = tree.traverse()) {
      return find(parser, prefix, null);
    } catch (IOException e) {
      throw new UncheckedIOException("a tree always reads", e);
    }
  }

  /**
   * Reads the value at the parser's next token to its end; the first null list entry in it, as
   * {@code prefix.spec.containers[0]}, or empty. With {@code field}, only entries below that field
   * of the top object count (its name matched ignoring case) and the prefix is that name as sent.
   */
  public static Optional<String> find(JsonParser parser, String prefix, String field) throws IOException {
    var depth = 0;
    // Where the value sits in what the tokens were copied from (a review's object keeps its place
    // in the review): paths are told from here.
    JsonStreamContext outside = null;
    var fieldSeen = false;
    for (var token = parser.nextToken(); token != null; token = parser.nextToken()) {
      if (field != null && depth == 1 && token == JsonToken.FIELD_NAME) {
        // Only that field's value is read: other fields (5,000 NodeNames) are skipped, and
        // reading ends with it (kube-scheduler sends the Pod first).
        if (fieldSeen) {
          return Optional.empty();
        }
        if (!field.equalsIgnoreCase(parser.currentName())) {
          parser.nextToken();
          parser.skipChildren();
          continue;
        }
        fieldSeen = true;
        continue;
      }
      if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
        if (depth++ == 0) {
          outside = parser.getParsingContext().getParent();
        }
      } else if (token == JsonToken.END_OBJECT || token == JsonToken.END_ARRAY) {
        if (--depth == 0) {
          break;
        }
      } else if (token == JsonToken.VALUE_NULL && parser.getParsingContext().inArray()) {
        var path = path(parser.getParsingContext(), outside);
        if (field == null) {
          var relative = path.startsWith(".") ? path.substring(1) : path;
          return Optional.of(prefix.isEmpty() ? relative : prefix + path);
        }
        var top = path.substring(1).split("[.\\[]", 2)[0];
        if (path.startsWith(".") && top.equalsIgnoreCase(field)) {
          return Optional.of(path.substring(1));
        }
      }
    }
    return Optional.empty();
  }

  /**
   * Follows the tokens of a value that another pass reads anyway (the review decoder skipping a
   * pod), noting the first null list entry in it: what {@link #find(JsonParser, String, String)}
   * with no prefix and no field answers, without a pass of its own. Made on the value's first
   * token, then given each token after it.
   */
  public static final class Watch {
    private final JsonStreamContext outside;
    private String found;

    public Watch(JsonParser parser) {
      outside = parser.getParsingContext().getParent();
    }

    public void token(JsonParser parser, JsonToken token) {
      if (token == JsonToken.VALUE_NULL && found == null && parser.getParsingContext().inArray()) {
        var path = path(parser.getParsingContext(), outside);
        found = path.startsWith(".") ? path.substring(1) : path;
      }
    }

    /** Where the first null list entry is, as {@code spec.containers[0]}; empty when none so far. */
    public Optional<String> found() {
      return Optional.ofNullable(found);
    }
  }

  /** What a person reads: where the entry is and what to do about it. */
  public static String problem(String where) {
    return where + " is null: an entry of a list cannot be empty (remove it, or give it its fields)";
  }

  /** {@code .spec.containers[0]} for the parser's position; built only when an entry is found. */
  private static String path(JsonStreamContext context, JsonStreamContext outside) {
    var path = new StringBuilder();
    for (var at = context; at != null && at != outside && !at.inRoot(); at = at.getParent()) {
      path.insert(0, at.inArray() ? "[" + at.getCurrentIndex() + "]" : "." + at.getCurrentName());
    }
    return path.toString();
  }
}
