package io.gpuadmission.pod;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;

/**
 * Finds a null entry in a list of an object read as JSON ({@code containers: [null]}, {@code env:
 * [null]}). Kubernetes' own types cannot hold one: Go decodes it as an empty struct, so neither
 * kube-apiserver nor kube-scheduler sends a Pod with one. The rules read every entry, so such an
 * object is refused before them, saying where the entry is, instead of failing inside a rule.
 */
public final class NullListEntry {
  private NullListEntry() {}

  /** Where the first null list entry is, as {@code prefix.spec.containers[0]}; empty when none. */
  public static Optional<String> find(JsonNode tree, String prefix) {
    if (tree == null) {
      return Optional.empty();
    }
    var path = within(tree);
    if (path == null) {
      return Optional.empty();
    }
    var relative = path.startsWith(".") ? path.substring(1) : path;
    return Optional.of(prefix.isEmpty() ? relative : prefix + path);
  }

  /** What a person reads: where the entry is and what to do about it. */
  public static String problem(String where) {
    return where + " is null: an entry of a list cannot be empty (remove it, or give it its fields)";
  }

  /** The path below {@code node} to the first null list entry, or null; paths are built only when one is found. */
  private static String within(JsonNode node) {
    if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        var entry = node.get(i);
        if (entry.isNull()) {
          return "[" + i + "]";
        }
        var below = entry.isContainerNode() ? within(entry) : null;
        if (below != null) {
          return "[" + i + "]" + below;
        }
      }
    } else if (node.isObject()) {
      for (var field : node.properties()) {
        var value = field.getValue();
        var below = value.isContainerNode() ? within(value) : null;
        if (below != null) {
          return "." + field.getKey() + below;
        }
      }
    }
    return null;
  }
}
