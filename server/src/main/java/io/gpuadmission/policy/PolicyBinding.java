package io.gpuadmission.policy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Binds the merged policy tree to {@link GpuPolicy} and finds every key and value that cannot be
 * bound, not only the first one Jackson stops at: each bad node is set aside (the built-in
 * default's value put back, or the node removed) and binding tried again. One {@code kubectl
 * apply} or {@code policy check} then names every mistake of the document.
 */
final class PolicyBinding {
  private static final Pattern SEGMENT = Pattern.compile("([^.\\[\\]]+)|\\[(\\d+)]");
  /** More than a person fixes in one go; a bound on the retries whatever the document. */
  private static final int MOST_ERRORS = 100;

  /** A key path in the bound tree and the error Jackson gave there. */
  record Failure(String path, JsonMappingException error) {}

  private final ObjectNode tree;
  private final ObjectNode defaults;
  /** Per list (its path as the user wrote it), the user's indices of the items set aside. */
  private final Map<String, List<Integer>> removedItems = new HashMap<>();

  private final List<Failure> failures = new ArrayList<>();
  private GpuPolicy policy;

  private PolicyBinding(ObjectNode tree, ObjectNode defaults) {
    this.tree = tree;
    this.defaults = defaults;
  }

  /**
   * Binds {@code merged} (changed in place as bad nodes are set aside); {@code defaults} is the
   * built-in document, whose values replace bad ones.
   */
  static PolicyBinding bind(ObjectMapper mapper, ObjectNode merged, ObjectNode defaults) throws JsonProcessingException {
    var binding = new PolicyBinding(merged, defaults);
    binding.run(mapper);
    return binding;
  }

  private void run(ObjectMapper mapper) throws JsonProcessingException {
    for (var attempt = 0; failures.size() < MOST_ERRORS && attempt < 2 * MOST_ERRORS; attempt++) {
      try {
        policy = mapper.treeToValue(tree, GpuPolicy.class);
        return;
      } catch (JsonMappingException e) {
        var bound = pathOf(e);
        var written = asWritten(bound);
        if (failures.stream().anyMatch(f -> f.path().equals(written))) {
          // Set aside, a value the record cannot do without (a required weight) leaves a hole:
          // set aside what holds it too, without a second error for the same mistake.
          bound = parent(bound);
          if (!setAside(bound, asWritten(bound))) {
            return;
          }
          continue;
        }
        failures.add(new Failure(written, e));
        if (!setAside(bound, written)) {
          return; // nothing to set aside (an error of the whole document): this is all we can say
        }
      }
    }
  }

  private static String parent(String path) {
    return path.substring(0, Math.max(0, path.endsWith("]") ? path.lastIndexOf('[') : path.lastIndexOf('.')));
  }

  /** Every key or value that could not be bound, at its path as the user wrote it. */
  List<Failure> failures() {
    return failures;
  }

  /** The policy with the bad nodes set aside; null when the document itself could not be bound. */
  GpuPolicy policy() {
    return policy;
  }

  /**
   * A path of the bound tree as the user wrote it: list items set aside shifted the later ones, so
   * {@code declared[1]} of the tree may be the user's {@code declared[2]}.
   */
  String asWritten(String boundPath) {
    var written = new StringBuilder();
    var matcher = SEGMENT.matcher(boundPath);
    while (matcher.find()) {
      if (matcher.group(1) != null) {
        written.append(written.isEmpty() ? "" : ".").append(matcher.group(1));
      } else {
        var index = Integer.parseInt(matcher.group(2));
        for (var removed : removedItems.getOrDefault(written.toString(), List.of())) {
          if (removed <= index) {
            index++;
          }
        }
        written.append('[').append(index).append(']');
      }
    }
    return written.toString();
  }

  /** Puts the default's value at {@code bound}, or removes the node; false when there is none to change. */
  private boolean setAside(String bound, String written) {
    var boundSegments = segments(bound);
    if (boundSegments.isEmpty()) {
      return false;
    }
    var parent = node(tree, boundSegments.subList(0, boundSegments.size() - 1));
    var last = boundSegments.getLast();
    var fallback = node(defaults, segments(written));
    if (parent instanceof ObjectNode object && object.has(last)) {
      if (fallback != null && !fallback.equals(object.get(last))) {
        object.set(last, fallback.deepCopy());
      } else {
        object.remove(last);
      }
      return true;
    }
    if (parent instanceof ArrayNode list && last.matches("\\d+") && Integer.parseInt(last) < list.size()) {
      list.remove(Integer.parseInt(last));
      var listPath = written.substring(0, written.lastIndexOf('['));
      var removed = removedItems.computeIfAbsent(listPath, p -> new ArrayList<>());
      removed.add(Integer.parseInt(written.substring(written.lastIndexOf('[') + 1, written.length() - 1)));
      removed.sort(null);
      return true;
    }
    return false;
  }

  private static List<String> segments(String path) {
    var segments = new ArrayList<String>();
    var matcher = SEGMENT.matcher(path);
    while (matcher.find()) {
      segments.add(matcher.group(1) != null ? matcher.group(1) : matcher.group(2));
    }
    return segments;
  }

  private static JsonNode node(JsonNode root, List<String> segments) {
    var node = root;
    for (var segment : segments) {
      if (node instanceof ObjectNode object) {
        node = object.get(segment);
      } else if (node instanceof ArrayNode list && segment.matches("\\d+")) {
        node = list.get(Integer.parseInt(segment));
      } else {
        return null;
      }
    }
    return node;
  }

  private static String pathOf(JsonMappingException e) {
    var path = new StringBuilder();
    for (var reference : e.getPath()) {
      if (reference.getFieldName() != null) {
        path.append(path.isEmpty() ? "" : ".").append(reference.getFieldName());
      } else if (reference.getIndex() >= 0) {
        path.append('[').append(reference.getIndex()).append(']');
      }
    }
    return path.toString();
  }
}
