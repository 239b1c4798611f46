package io.gpuadmission.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.admission.KubernetesJson;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

/**
 * The contract every extender answer keeps, judged from the request and the answer alone: a 200
 * with a well-formed ExtenderFilterResult, HostPriorityList, ExtenderPreemptionResult or
 * ExtenderBindingResult that names only nodes the request offered; a 400 with a reason; a 413 with a reason for a body over the
 * limit. Returns the outcome's name; throws on a broken contract.
 */
final class ExtenderAnswerCheck {
  /** Generated bodies stay under 3 MiB (a size the fuzzer sends in one piece). */
  static final long BODY_LIMIT = 3L * 1024 * 1024;
  /** gpu-admission.extender.max-body-size. */
  static final long EXTENDER_BODY_LIMIT = 128L * 1024 * 1024;

  private ExtenderAnswerCheck() {}

  static String check(String verb, byte[] request, int status, byte[] answer) {
    if (status == 413) {
      require(request.length > EXTENDER_BODY_LIMIT, "413 for a body within the limit");
      require(!read(answer).path("Error").asText().isBlank(), "413 without a reason");
      return "413";
    }
    var tree = read(answer);
    if (status == 400) {
      var error = tree.path("Error").asText();
      require(!error.isBlank(), "400 without a reason: " + tree);
      // A reason a person can act on, not the name of our bug.
      require(!error.contains("NullPointerException"), "400 that reports a NullPointerException: " + error);
      return "400";
    }
    require(status == 200, "HTTP " + status + ": " + text(answer));
    var sent = requestTree(request);
    require(sent != null && sent.isObject(), "200 for a body that is not a JSON object");
    return switch (verb) {
      case "filter" -> filterResult(tree, offered(sent));
      case "prioritize" -> priorities(tree, offered(sent));
      case "preempt" -> preemptionResult(tree, sent);
      default -> {
        require(tree.path("Error").isTextual() && tree.size() == 1, "not an ExtenderBindingResult: " + tree);
        yield tree.path("Error").asText().isEmpty() ? "200 bound" : "200 bind error";
      }
    };
  }

  private static String filterResult(JsonNode result, Set<String> offered) {
    for (var key : new String[] {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"}) {
      require(result.has(key), "ExtenderFilterResult without " + key + ": " + result);
    }
    require(result.path("Error").asText("x").isEmpty(), "filter Error in a 200: " + result);
    var named = new HashSet<String>();
    result.path("NodeNames").forEach(n -> named.add(n.asText()));
    result.path("Nodes").path("items").forEach(n -> named.add(n.path("metadata").path("name").asText()));
    for (var failures : new String[] {"FailedNodes", "FailedAndUnresolvableNodes"}) {
      result.path(failures).properties().forEach(e -> {
        require(e.getValue().isTextual() && !e.getValue().asText().isBlank(), failures + " without a reason: " + e);
        require(!named.contains(e.getKey()), "node both passed and failed: " + e.getKey());
        named.add(e.getKey());
      });
    }
    var outcome = named.isEmpty() ? "200 filter empty" : "200 filter";
    named.removeIf(name -> offered.contains(name) || offeredAsNumber(name, offered));
    require(named.isEmpty(), "answer names nodes not offered: " + named + " vs " + offered);
    return outcome;
  }

  /**
   * ExtenderPreemptionResult: only nodes kube-scheduler proposed, each with at least one victim
   * (kube-scheduler refuses a node answered with none), every victim it named still among them.
   */
  private static String preemptionResult(JsonNode result, JsonNode request) {
    require(result.isObject() && result.size() == 1 && result.path("NodeNameToMetaVictims").isObject(),
        "not an ExtenderPreemptionResult: " + result);
    var proposed = new java.util.HashMap<String, Set<String>>();
    request.properties().forEach(e -> {
      if (e.getKey().equalsIgnoreCase("NodeNameToMetaVictims") || e.getKey().equalsIgnoreCase("NodeNameToVictims")
          || e.getKey().equalsIgnoreCase("nodeToVictims")) {
        e.getValue().properties().forEach(node -> {
          var uids = new HashSet<String>();
          node.getValue().properties().forEach(f -> {
            if (f.getKey().equalsIgnoreCase("Pods")) {
              f.getValue().forEach(p -> p.properties().forEach(k -> {
                if (k.getKey().equalsIgnoreCase("UID")) {
                  uids.add(k.getValue().asText());
                } else if (k.getKey().equalsIgnoreCase("metadata")) {
                  uids.add(k.getValue().path("uid").asText());
                }
              }));
            }
          });
          proposed.merge(node.getKey(), uids, (a, b) -> {
            a.addAll(b);
            return a;
          });
        });
      }
    });
    result.path("NodeNameToMetaVictims").properties().forEach(node -> {
      require(proposed.containsKey(node.getKey()) || offeredAsNumber(node.getKey(), proposed.keySet()), "node not proposed: " + node.getKey());
      var answered = new HashSet<String>();
      node.getValue().path("Pods").forEach(p -> answered.add(p.path("UID").asText()));
      require(!answered.isEmpty(), "a node with no victims: " + node);
      var named = proposed.getOrDefault(node.getKey(), Set.of());
      require(answered.containsAll(named), "kube-scheduler's victims dropped on " + node.getKey() + ": " + named + " vs " + answered);
    });
    return result.path("NodeNameToMetaVictims").isEmpty() ? "200 preempt none" : "200 preempt";
  }

  private static String priorities(JsonNode list, Set<String> offered) {
    require(list.isArray(), "HostPriorityList is not an array: " + list);
    for (var entry : list) {
      var host = entry.path("Host").asText();
      require(entry.path("Host").isTextual() && (offered.contains(host) || offeredAsNumber(host, offered)), "Host not offered: " + entry);
      require(entry.path("Score").isIntegralNumber() && entry.path("Score").asLong() >= 0 && entry.path("Score").asLong() <= 10,
          "Score outside 0..10: " + entry);
    }
    return list.isEmpty() ? "200 prioritize empty" : "200 prioritize";
  }

  /**
   * A number sent as a node name reaches the service as its JSON text ("1E+162"), which the tree
   * here spells otherwise ("1.0E162"): the same number counts as offered.
   */
  private static boolean offeredAsNumber(String name, Set<String> offered) {
    try {
      var number = new java.math.BigDecimal(name);
      return offered.stream().anyMatch(o -> {
        try {
          return new java.math.BigDecimal(o).compareTo(number) == 0;
        } catch (NumberFormatException notNumber) {
          return false;
        }
      });
    } catch (NumberFormatException notNumber) {
      return false;
    }
  }

  /** Node names the request offered, under any casing of NodeNames or Nodes. */
  private static Set<String> offered(JsonNode request) {
    var names = new HashSet<String>();
    request.properties().forEach(e -> {
      if (e.getKey().equalsIgnoreCase("NodeNames")) {
        e.getValue().forEach(n -> names.add(n.asText()));
      } else if (e.getKey().equalsIgnoreCase("Nodes")) {
        e.getValue().path("items").forEach(n -> names.add(n.path("metadata").path("name").asText()));
      }
    });
    return names;
  }

  /** Numbers read exactly: a node name sent as 1E-330 must not become 0.0 here when the service keeps its text. */
  private static final com.fasterxml.jackson.databind.ObjectMapper EXACT =
      com.fasterxml.jackson.databind.json.JsonMapper.builder()
          .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
          .nodeFactory(com.fasterxml.jackson.databind.node.JsonNodeFactory.withExactBigDecimals(true))
          .build();

  private static JsonNode requestTree(byte[] request) {
    try {
      return EXACT.readTree(request);
    } catch (IOException | RuntimeException notJson) {
      return null;
    }
  }

  private static JsonNode read(byte[] json) {
    try {
      var tree = KubernetesJson.mapper().readTree(json);
      require(tree != null, "empty answer");
      return tree;
    } catch (IOException e) {
      throw new AssertionError("answer is not JSON: " + text(json), e);
    }
  }

  private static String text(byte[] bytes) {
    var text = new String(bytes, StandardCharsets.UTF_8);
    return text.length() <= 300 ? text : text.substring(0, 300) + "...";
  }

  private static void require(boolean condition, String problem) {
    if (!condition) {
      throw new AssertionError(problem);
    }
  }
}
