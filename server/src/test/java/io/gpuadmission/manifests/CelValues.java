package io.gpuadmission.manifests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.NullValue;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.function.Predicate;

/** JSON objects as CEL values (maps, lists, int64, double), and pod variants to evaluate. */
final class CelValues {
  private CelValues() {}

  static Object of(JsonNode node) {
    if (node.isObject()) {
      var map = new LinkedHashMap<String, Object>();
      node.fields().forEachRemaining(e -> map.put(e.getKey(), of(e.getValue())));
      return map;
    }
    if (node.isArray()) {
      var list = new ArrayList<Object>();
      node.forEach(e -> list.add(of(e)));
      return list;
    }
    if (node.isIntegralNumber()) {
      return node.asLong();
    }
    if (node.isNumber()) {
      return node.asDouble();
    }
    if (node.isBoolean()) {
      return node.asBoolean();
    }
    if (node.isNull()) {
      return NullValue.NULL_VALUE;
    }
    return node.asText();
  }

  /** Whether any container or init container names a resource the predicate accepts. */
  static boolean asksFor(JsonNode pod, Predicate<String> resource) {
    for (var list : List.of("containers", "initContainers")) {
      for (var container : pod.path("spec").path(list)) {
        for (var field : List.of("limits", "requests")) {
          var names = container.path("resources").path(field).fieldNames();
          while (names.hasNext()) {
            if (resource.test(names.next())) {
              return true;
            }
          }
        }
      }
    }
    return false;
  }

  /**
   * The pod with each container's limits moved to requests, with its requests dropped, and with
   * its containers made init containers (behind a plain container): where a GPU is asked for must
   * not change which webhook is called.
   */
  static List<JsonNode> variants(JsonNode pod) {
    var out = new ArrayList<JsonNode>();
    out.add(edited(pod, resources -> {
      if (resources.has("limits")) {
        resources.set("requests", resources.remove("limits"));
      }
    }));
    out.add(edited(pod, resources -> resources.remove("requests")));
    var init = pod.deepCopy();
    var spec = (ObjectNode) init.path("spec");
    if (spec.path("containers").isArray()) {
      spec.set("initContainers", spec.path("containers").deepCopy());
      spec.putArray("containers").addObject().put("name", "main").put("image", "busybox:1.36");
      out.add(init);
    }
    return out;
  }

  private static JsonNode edited(JsonNode pod, java.util.function.Consumer<ObjectNode> resources) {
    var copy = pod.deepCopy();
    for (var list : List.of("containers", "initContainers")) {
      for (var container : copy.path("spec").path(list)) {
        if (container.path("resources").isObject()) {
          resources.accept((ObjectNode) container.path("resources"));
        }
      }
    }
    return copy;
  }
}
