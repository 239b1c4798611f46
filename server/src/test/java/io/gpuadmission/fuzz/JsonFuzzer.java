package io.gpuadmission.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Seeded generator of hostile JSON: arbitrary values, and real objects with one node anywhere in
 * the tree replaced, removed or joined by another. Strings lean to what the rules parse:
 * quantities, label values, names, resource keys.
 */
final class JsonFuzzer {
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
  private static final List<String> INTERESTING =
      List.of(
          "", " ", "true", "false", "0", "-1", "1", "2", "8", "9223372036854775808", "1e400", "-1e-400", "NaN",
          "Infinity", "0.5", "1.5Gi", "16Gi", "-16Gi", "1Ei", "999999999999999999999Ei", "12209MiB", "1m", "0.000001",
          "1e3", "1E+18", "0x10", "Gi", "16gb", "nvidia.com/gpu", "aliyun.com/gpu", "aliyun.com/gpu-mem",
          "aliyun.com/gpu-count", "nvidia.com/", "gpu-topology", "gpu-topology-replica", "gpu-admission.io/gpu-model",
          "gpu-admission.io/min-gpu-memory", "gpu-admission.io/memory-self-limited", "gpu-admission.io/ignore",
          "aliyun.accelerator/nvidia_name", "ack.node.gpu.schedule", "Tesla-V100-SXM2-16GB", "DoesNotExist", "In",
          "NotIn", "Exists", "Gt", "CREATE", "UPDATE", "DELETE", "CONNECT", "Pod", "Deployment", "PyTorchJob", "v1",
          "apps", "kubeflow.org", "DaemonSet", "ReplicaSet", "StatefulSet", "Job", "Master", "Worker", "Launcher",
          "kube-system", "gpu-admission", "default", "ClusterFirstWithHostNet", "~1", "/", "a/b/c", "\u0000",
          "\uD83D\uDE80", "\u202E", "é", "x".repeat(300), "a".repeat(64));

  private final Random random;

  JsonFuzzer(long seed) {
    this.random = new Random(seed);
  }

  Random random() {
    return random;
  }

  /** Any JSON value, up to {@code depth} levels of arrays and objects. */
  JsonNode value(int depth) {
    var choice = random.nextInt(depth <= 0 ? 7 : 10);
    return switch (choice) {
      case 0 -> JSON.nullNode();
      case 1 -> JSON.booleanNode(random.nextBoolean());
      case 2 -> number();
      case 3, 4, 5 -> JSON.textNode(string());
      case 6 -> JSON.objectNode();
      case 7 -> array(depth - 1);
      default -> object(depth - 1);
    };
  }

  private JsonNode number() {
    return switch (random.nextInt(6)) {
      case 0 -> JSON.numberNode(random.nextInt(20) - 5);
      case 1 -> JSON.numberNode(random.nextLong());
      case 2 -> JSON.numberNode(random.nextDouble() * 1e6 - 5e5);
      case 3 -> JSON.numberNode(new BigInteger(200, random));
      case 4 -> JSON.numberNode(new BigDecimal("1e" + (random.nextInt(800) - 400)));
      default -> JSON.numberNode(0);
    };
  }

  String string() {
    if (random.nextInt(4) == 0) {
      var length = random.nextInt(12);
      var text = new StringBuilder();
      for (int i = 0; i < length; i++) {
        text.append((char) (random.nextBoolean() ? 'a' + random.nextInt(26) : random.nextInt(0x3000)));
      }
      return text.toString();
    }
    return INTERESTING.get(random.nextInt(INTERESTING.size()));
  }

  private ArrayNode array(int depth) {
    var array = JSON.arrayNode();
    var size = random.nextInt(4);
    for (int i = 0; i < size; i++) {
      array.add(value(depth));
    }
    return array;
  }

  private ObjectNode object(int depth) {
    var object = JSON.objectNode();
    var size = random.nextInt(4);
    for (int i = 0; i < size; i++) {
      object.set(string(), value(depth));
    }
    return object;
  }

  /**
   * A deep copy of {@code tree} with one node changed: replaced by any value, removed, or given
   * a new sibling field. Every node is a candidate, from the root to the leaves of the object.
   */
  JsonNode mutate(JsonNode tree) {
    var copy = tree.deepCopy();
    var parents = new ArrayList<JsonNode>();
    collectContainers(copy, parents);
    var parent = parents.get(random.nextInt(parents.size()));
    if (parent.isObject()) {
      var object = (ObjectNode) parent;
      var names = new ArrayList<String>();
      object.fieldNames().forEachRemaining(names::add);
      if (names.isEmpty() || random.nextInt(6) == 0) {
        object.set(string(), value(2));
        return copy;
      }
      var name = names.get(random.nextInt(names.size()));
      if (random.nextInt(5) == 0) {
        object.remove(name);
      } else {
        object.set(name, value(2));
      }
    } else {
      var array = (ArrayNode) parent;
      if (array.isEmpty() || random.nextInt(5) == 0) {
        array.add(value(2));
      } else if (random.nextInt(5) == 0) {
        array.remove(random.nextInt(array.size()));
      } else {
        array.set(random.nextInt(array.size()), value(2));
      }
    }
    return copy;
  }

  private static void collectContainers(JsonNode node, List<JsonNode> into) {
    if (node.isContainerNode()) {
      into.add(node);
      node.elements().forEachRemaining(child -> collectContainers(child, into));
    }
  }

  /** Arrays or objects nested {@code depth} deep, optionally unclosed. */
  static String nested(int depth, boolean objects, boolean closed) {
    var open = objects ? "{\"a\":" : "[";
    var close = objects ? "}" : "]";
    var text = new StringBuilder(depth * open.length() * 2);
    text.append(open.repeat(depth)).append("1");
    if (closed) {
      text.append(close.repeat(depth));
    }
    return text.toString();
  }
}
