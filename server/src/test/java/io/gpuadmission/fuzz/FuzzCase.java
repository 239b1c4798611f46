package io.gpuadmission.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** One generated request body and how it was made (for the failure report). */
record FuzzCase(String how, byte[] body) {

  /** The {@code index}-th case of a run: mostly damaged real reviews, some pure noise. */
  static FuzzCase next(JsonFuzzer fuzzer, List<JsonNode> corpus, int index) {
    var random = fuzzer.random();
    var base = corpus.get(random.nextInt(corpus.size())).deepCopy();
    // A uid per case, as the API server gives each request (the webhook logs a uid once).
    ((ObjectNode) base.path("request")).put("uid", "fuzz-" + index);
    return switch (index % 20) {
      case 0 -> new FuzzCase("arbitrary JSON", bytes(fuzzer.value(4).toString()));
      case 1 -> truncated(base, random.nextDouble());
      case 2 -> nested(fuzzer, base);
      case 3 -> {
        var noise = new byte[random.nextInt(200)];
        random.nextBytes(noise);
        yield new FuzzCase("random bytes", noise);
      }
      case 4, 5, 6, 7, 8, 9 -> objectMutated(fuzzer, base, 1 + random.nextInt(4));
      default -> {
        var tree = base;
        var rounds = 1 + random.nextInt(3);
        for (int i = 0; i < rounds; i++) {
          tree = fuzzer.mutate(tree);
        }
        yield new FuzzCase("review with " + rounds + " node(s) changed", bytes(tree.toString()));
      }
    };
  }

  private static FuzzCase objectMutated(JsonFuzzer fuzzer, JsonNode review, int rounds) {
    var copy = (ObjectNode) review.deepCopy();
    var request = (ObjectNode) copy.path("request");
    var object = request.path("object");
    if (!object.isContainerNode()) {
      return new FuzzCase("review without object", bytes(copy.toString()));
    }
    for (int i = 0; i < rounds; i++) {
      object = fuzzer.mutate(object);
    }
    request.set("object", object);
    return new FuzzCase("request.object with " + rounds + " node(s) changed", bytes(copy.toString()));
  }

  private static FuzzCase truncated(JsonNode review, double where) {
    var whole = bytes(review.toString());
    var cut = (int) (where * whole.length);
    return new FuzzCase("truncated at byte " + cut, java.util.Arrays.copyOf(whole, cut));
  }

  private static FuzzCase nested(JsonFuzzer fuzzer, JsonNode review) {
    var random = fuzzer.random();
    var depth = 10 + random.nextInt(random.nextBoolean() ? 900 : 20_000);
    var objects = random.nextBoolean();
    var closed = random.nextInt(4) != 0;
    var deep = JsonFuzzer.nested(depth, objects, closed);
    if (random.nextBoolean()) {
      return new FuzzCase("nested " + depth + " deep", bytes(deep));
    }
    var text = review.toString();
    var at = text.indexOf("\"metadata\":{");
    if (at < 0) {
      return new FuzzCase("nested " + depth + " deep", bytes(deep));
    }
    at += "\"metadata\":{".length();
    var body = text.substring(0, at) + "\"labels\":" + deep + "," + text.substring(at);
    return new FuzzCase("object labels nested " + depth + " deep", bytes(body));
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  String excerpt() {
    var text = new String(body, StandardCharsets.UTF_8);
    return text.length() <= 600 ? text : text.substring(0, 600) + "... (" + body.length + " bytes)";
  }
}
