package io.gpuadmission.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.support.Fixtures;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The real extender requests the fuzzer starts from: kube-scheduler's ExtenderArgs fixtures (Go
 * keys with NodeNames, lower-case keys with Node objects), ExtenderArgs around every pod fixture,
 * ExtenderPreemptionArgs around every pod fixture (victims by UID on every fixture node, and whole
 * victim pods under old lower-case keys), and ExtenderBindingArgs for pods that do not exist (a
 * fuzzed bind must not move a real pod).
 */
record ExtenderCorpus(List<JsonNode> args, List<JsonNode> bindings, List<JsonNode> preemptions) {

  static ExtenderCorpus load() {
    var nodeNamesArgs = Fixtures.jsonTree(Fixtures.path("extender/filter-args-node-names.json"));
    var args = new ArrayList<JsonNode>(List.of(nodeNamesArgs, Fixtures.jsonTree(Fixtures.path("extender/filter-args-nodes-lowercase.json"))));
    for (var pod : podFixtures()) {
      var wrapped = (ObjectNode) nodeNamesArgs.deepCopy();
      wrapped.set("Pod", pod);
      args.add(wrapped);
    }
    var bindings = new ArrayList<JsonNode>();
    for (var node : nodeNamesArgs.path("NodeNames")) {
      var binding = KubernetesJson.mapper().createObjectNode();
      binding.put("PodName", "fuzz-absent").put("PodNamespace", "fuzz-absent").put("PodUID", "0f0e0d0c").put("Node", node.asText());
      bindings.add(binding);
    }
    var preemptions = new ArrayList<JsonNode>();
    for (var pod : podFixtures()) {
      var meta = KubernetesJson.mapper().createObjectNode();
      meta.set("Pod", pod);
      var victims = meta.putObject("NodeNameToMetaVictims");
      var whole = KubernetesJson.mapper().createObjectNode();
      whole.set("pod", pod);
      var pods = whole.putObject("nodeToVictims");
      for (var node : nodeNamesArgs.path("NodeNames")) {
        var entry = victims.putObject(node.asText());
        entry.putArray("Pods").addObject().put("UID", "fuzz-victim-" + node.asText());
        entry.put("NumPDBViolations", 0);
        var victim = pods.putObject(node.asText()).put("numPDBViolations", 1).putArray("pods").addObject();
        victim.putObject("metadata").put("name", "fuzz-victim").put("namespace", "fuzz-absent").put("uid", "fuzz-victim-" + node.asText());
      }
      preemptions.add(meta);
      preemptions.add(whole);
    }
    return new ExtenderCorpus(List.copyOf(args), List.copyOf(bindings), List.copyOf(preemptions));
  }

  private static List<JsonNode> podFixtures() {
    try (Stream<Path> walk = Files.walk(Fixtures.path("mutation"))) {
      return walk.filter(p -> p.toString().endsWith("pod.yaml")).sorted().map(Fixtures::yamlTree).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
