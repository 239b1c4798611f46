package io.gpuadmission.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A JSON Patch as people read it: one aligned line per operation, the JSON pointer as a field path
 * ({@code /spec/containers/0/resources/limits/nvidia.com~1gpu} becomes {@code
 * spec.containers[0].resources.limits["nvidia.com/gpu"]}) and the value as compact JSON.
 */
final class ReadablePatch {
  private static final Pattern PLAIN_KEY = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Pattern INDEX = Pattern.compile("0|[1-9][0-9]*|-");

  private ReadablePatch() {}

  /** The operations, each indented by {@code indent}, columns aligned. */
  static List<String> lines(JsonNode patch, String indent) {
    var ops = new ArrayList<String>();
    var paths = new ArrayList<String>();
    var values = new ArrayList<String>();
    for (var operation : patch) {
      ops.add(operation.path("op").asText());
      paths.add(path(operation.path("path").asText()));
      values.add(operation.has("value") ? operation.get("value").toString() : "");
    }
    var opWidth = ops.stream().mapToInt(String::length).max().orElse(0);
    var pathWidth = paths.stream().mapToInt(String::length).max().orElse(0);
    var out = new ArrayList<String>();
    for (int i = 0; i < ops.size(); i++) {
      var line = indent + pad(ops.get(i), opWidth) + "  " + (values.get(i).isEmpty() ? paths.get(i) : pad(paths.get(i), pathWidth) + "  " + values.get(i));
      out.add(line.stripTrailing());
    }
    return out;
  }

  /** A JSON pointer as a field path. */
  static String path(String pointer) {
    var out = new StringBuilder();
    if (pointer.isEmpty()) {
      return "(the object)";
    }
    for (var raw : pointer.substring(1).split("/", -1)) {
      var segment = raw.replace("~1", "/").replace("~0", "~");
      if (INDEX.matcher(segment).matches() && out.length() > 0) {
        out.append('[').append(segment).append(']');
      } else if (PLAIN_KEY.matcher(segment).matches()) {
        out.append(out.length() == 0 ? "" : ".").append(segment);
      } else {
        out.append("[\"").append(segment.replace("\\", "\\\\").replace("\"", "\\\"")).append("\"]");
      }
    }
    return out.toString();
  }

  static String pad(String text, int width) {
    return text.length() >= width ? text : text + " ".repeat(width - text.length());
  }
}
