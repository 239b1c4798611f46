package io.gpuadmission.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.Reviews;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The real reviews the fuzzer starts from: every review, pod, workload and policy fixture. */
final class ReviewCorpus {
  private ReviewCorpus() {}

  static List<JsonNode> load() {
    var reviews = new ArrayList<JsonNode>();
    for (var file : files("reviews", ".json")) {
      if (!file.toString().endsWith(".expected.json")) {
        reviews.add(Fixtures.jsonTree(file));
      }
    }
    var uid = 0;
    for (var file : files("mutation", "pod.yaml")) {
      reviews.add(review("fuzz-pod-" + uid++, Fixtures.yamlTree(file)));
    }
    for (var dir : List.of("workloads", "cluster")) {
      for (var file : files(dir, ".yaml")) {
        var tree = Fixtures.yamlTree(file);
        if (tree.has("items")) {
          tree.path("items").forEach(item -> reviews.add(review("fuzz-item", item)));
        } else {
          reviews.add(review("fuzz-workload-" + uid++, tree));
        }
      }
    }
    reviews.add(review("fuzz-policy", Fixtures.yamlTree(Path.of("manifests/base/policy-configmap.yaml"))));
    return List.copyOf(reviews);
  }

  private static JsonNode review(String uid, JsonNode object) {
    try {
      return io.gpuadmission.admission.KubernetesJson.mapper().readTree(Reviews.create(uid, object));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<Path> files(String dir, String suffix) {
    try (Stream<Path> walk = Files.walk(Fixtures.path(dir))) {
      return walk.filter(p -> p.toString().endsWith(suffix)).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
