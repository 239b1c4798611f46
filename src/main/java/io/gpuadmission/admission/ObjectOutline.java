package io.gpuadmission.admission;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.gpuadmission.pod.NullListEntry;
import java.io.IOException;
import java.util.Optional;

/**
 * What the decoder notes about an object while it skips over it, for {@link MalformedPod}: whether
 * {@code metadata} and {@code spec} are objects, and the first null list entry. Noted on the one
 * pass that reads the object's tokens anyway, so the check costs no pass of its own.
 */
record ObjectOutline(boolean metadata, boolean spec, Optional<String> nullListEntry) {
  /** A value that is not an object or array (only in a malformed review). */
  static final ObjectOutline NOT_AN_OBJECT = new ObjectOutline(false, false, Optional.empty());

  /** Reads the value starting at the parser's current token (an object or array) to its end. */
  static ObjectOutline read(JsonParser parser) throws IOException {
    var nulls = new NullListEntry.Watch(parser);
    var topIsObject = parser.currentToken() == JsonToken.START_OBJECT;
    var metadata = false;
    var spec = false;
    String topField = null;
    var depth = 1;
    for (var token = parser.nextToken(); token != null; token = parser.nextToken()) {
      switch (token) {
        case FIELD_NAME -> topField = depth == 1 ? parser.currentName() : topField;
        case START_OBJECT -> {
          // As many times as a key is repeated, any object under it counts, as the check always did.
          if (depth++ == 1 && topIsObject) {
            metadata |= "metadata".equals(topField);
            spec |= "spec".equals(topField);
          }
        }
        case START_ARRAY -> depth++;
        case END_OBJECT, END_ARRAY -> {
          if (--depth == 0) {
            return new ObjectOutline(metadata, spec, nulls.found());
          }
        }
        default -> nulls.token(parser, token);
      }
    }
    return new ObjectOutline(metadata, spec, nulls.found());
  }
}
