package io.gpuadmission.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;

/** One generated extender request: the verb it goes to, its body and how it was made. */
record ExtenderFuzzCase(String verb, String how, byte[] body) {
  private static final String[] VERBS = {"filter", "prioritize", "bind", "preempt"};

  /** The {@code index}-th case of a run: mostly damaged real requests, some noise, a few of nearly 3 MiB. */
  static ExtenderFuzzCase next(JsonFuzzer fuzzer, ExtenderCorpus corpus, int index) {
    var random = fuzzer.random();
    var verb = VERBS[index % VERBS.length];
    var pool = verb.equals("bind") ? corpus.bindings() : verb.equals("preempt") ? corpus.preemptions() : corpus.args();
    var base = pool.get(random.nextInt(pool.size())).deepCopy();
    if (index % 500 == 499) {
      return huge(verb, base);
    }
    return switch (index % 19) {
      case 0 -> new ExtenderFuzzCase(verb, "arbitrary JSON", bytes(fuzzer.value(4).toString()));
      case 1 -> {
        var whole = bytes(base.toString());
        var cut = random.nextInt(whole.length);
        yield new ExtenderFuzzCase(verb, "truncated at byte " + cut, Arrays.copyOf(whole, cut));
      }
      case 2 -> nested(fuzzer, verb, base);
      case 3 -> {
        var noise = new byte[random.nextInt(200)];
        random.nextBytes(noise);
        yield new ExtenderFuzzCase(verb, "random bytes", noise);
      }
      case 4, 5, 6, 7 -> fieldReplaced(fuzzer, verb, (ObjectNode) base);
      case 8, 9, 10, 11, 12 -> podMutated(fuzzer, verb, base, 1 + random.nextInt(4));
      default -> {
        var tree = base;
        var rounds = 1 + random.nextInt(3);
        for (int i = 0; i < rounds; i++) {
          tree = fuzzer.mutate(tree);
        }
        yield new ExtenderFuzzCase(verb, "request with " + rounds + " node(s) changed", bytes(tree.toString()));
      }
    };
  }

  /** A top-level field (Pod, NodeNames, Nodes, PodName, ...) replaced by any JSON value. */
  private static ExtenderFuzzCase fieldReplaced(JsonFuzzer fuzzer, String verb, ObjectNode args) {
    var names = new ArrayList<String>();
    args.fieldNames().forEachRemaining(names::add);
    var name = names.get(fuzzer.random().nextInt(names.size()));
    args.set(name, fuzzer.value(3));
    return new ExtenderFuzzCase(verb, name + " replaced", bytes(args.toString()));
  }

  private static ExtenderFuzzCase podMutated(JsonFuzzer fuzzer, String verb, JsonNode args, int rounds) {
    var pod = args.path("Pod").isMissingNode() ? args.path("pod") : args.path("Pod");
    if (!pod.isObject()) {
      return new ExtenderFuzzCase(verb, "request without Pod", bytes(args.toString()));
    }
    for (int i = 0; i < rounds; i++) {
      pod = fuzzer.mutate(pod);
    }
    ((ObjectNode) args).set(args.has("Pod") ? "Pod" : "pod", pod);
    return new ExtenderFuzzCase(verb, "Pod with " + rounds + " node(s) changed", bytes(args.toString()));
  }

  private static ExtenderFuzzCase nested(JsonFuzzer fuzzer, String verb, JsonNode args) {
    var random = fuzzer.random();
    var depth = 10 + random.nextInt(random.nextBoolean() ? 900 : 20_000);
    var deep = JsonFuzzer.nested(depth, random.nextBoolean(), random.nextInt(4) != 0);
    var text = args.toString();
    var at = text.indexOf("\"metadata\":{");
    if (random.nextBoolean() || at < 0) {
      return new ExtenderFuzzCase(verb, "nested " + depth + " deep", bytes(deep));
    }
    at += "\"metadata\":{".length();
    return new ExtenderFuzzCase(verb, "Pod labels nested " + depth + " deep", bytes(text.substring(0, at) + "\"labels\":" + deep + "," + text.substring(at)));
  }

  /** A request padded to just under the 3 MiB limit with one long annotation. */
  private static ExtenderFuzzCase huge(String verb, JsonNode base) {
    var size = (int) ExtenderAnswerCheck.BODY_LIMIT - 64 * 1024;
    var padding = "x".repeat(Math.max(0, size - base.toString().length()));
    var target = base.path("Pod").path("metadata");
    if (target.isObject()) {
      ((ObjectNode) target).putObject("annotations").put("padding", padding);
    } else {
      ((ObjectNode) base).put("Padding", padding);
    }
    return new ExtenderFuzzCase(verb, "just under the body limit", bytes(base.toString()));
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  String excerpt() {
    var text = new String(body, StandardCharsets.UTF_8);
    return text.length() <= 600 ? text : text.substring(0, 600) + "... (" + body.length + " bytes)";
  }
}
