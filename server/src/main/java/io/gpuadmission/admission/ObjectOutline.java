package io.gpuadmission.admission;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.gpuadmission.pod.NullListEntry;
import java.io.IOException;
import java.util.Optional;

/**
 * What the decoder notes about an object while it skips over it, for {@link MalformedPod}: whether
 * it is an object at all, whether {@code metadata} and {@code spec} are objects, and the first null
 * list entry. Noted on the one
 * pass that reads the object's tokens anyway, so the check costs no pass of its own.
 */
record ObjectOutline(boolean object, boolean metadata, boolean spec, Optional<String> nullListEntry) {
  /** A value that is not an object or array (only in a malformed review). */
  static final ObjectOutline NOT_AN_OBJECT = new ObjectOutline(false, false, false, Optional.empty());

  /** Reads the value starting at the parser's current token (an object or array) to its end. */
  static ObjectOutline read(JsonParser parser) throws IOException {
    var nulls = new NullListEntry.Watch(parser);
    var topIsObject = parser.currentToken() == JsonToken.START_OBJECT;
    var metadata = false;
    var spec = false;
    String topField = null;
    var topValueNext = false;
    var depth = 1;
    for (var token = parser.nextToken(); token != null; token = parser.nextToken()) {
      if (topValueNext) {
        // A repeated key's last value is the one the typed read keeps, so it is the one judged.
        topValueNext = false;
        if ("metadata".equals(topField)) {
          metadata = token == JsonToken.START_OBJECT;
        } else if ("spec".equals(topField)) {
          spec = token == JsonToken.START_OBJECT;
        }
      }
      switch (token) {
        case FIELD_NAME -> {
          if (depth == 1 && topIsObject) {
            topField = parser.currentName();
            topValueNext = true;
          }
        }
        case START_OBJECT -> depth++;
        case START_ARRAY -> depth++;
        case END_OBJECT, END_ARRAY -> {
          if (--depth == 0) {
            return new ObjectOutline(topIsObject, metadata, spec, nulls.found());
          }
        }
        default -> nulls.token(parser, token);
      }
    }
    return new ObjectOutline(topIsObject, metadata, spec, nulls.found());
  }
}
