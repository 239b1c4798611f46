package io.gpuadmission.mutation;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.support.Fixtures;
import java.nio.file.Files;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The tree a pod serializes to is the one {@code valueToTree} gives: same nodes, same order, same node types. */
class TreeGeneratorTest {
  private static final com.fasterxml.jackson.databind.ObjectMapper MAPPER = KubernetesJson.mapper();

  static Stream<String> pods() throws Exception {
    var mutations = Fixtures.path("mutation");
    try (var dirs = Files.list(mutations)) {
      var cases = dirs.map(dir -> "mutation/" + dir.getFileName() + "/pod.yaml").sorted().toList();
      return Stream.concat(cases.stream(), Stream.of("bench/admissionreview-gpu-topology.json", "bench/admissionreview-cpu-only.json"));
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pods")
  void buildsTheTreeValueToTreeBuilds(String fixture) throws Exception {
    var file = Fixtures.path(fixture);
    var json = fixture.endsWith(".json") ? Fixtures.jsonTree(file).path("request").path("object") : Fixtures.podJson(file);
    var pod = MAPPER.treeToValue(json, Pod.class);

    assertSameTree(pod);
  }

  @Test
  void keepsUnknownFieldsNumbersNullsAndTextAsValueToTreeDoes() throws Exception {
    var pod = MAPPER.readValue(
        ("{'metadata':{'name':'p','labels':{'a':'ü ✓'}},'spec':{'containers':[{'name':'c','ports':[{'containerPort':80}]}],"
            + "'terminationGracePeriodSeconds':30,'activeDeadlineSeconds':9000000000,'x-unknown':[1,2.5,9000000000,true,null,"
            + "{'deep':[[]],'e':{}}],'overhead':{'cpu':'250m'}},'futureField':{'n':-1.0e-3}}").replace('\'', '"'),
        Pod.class);

    assertSameTree(pod);
  }

  private static void assertSameTree(Object value) {
    var expected = MAPPER.valueToTree(value);
    var tree = TreeGenerator.tree(MAPPER, value);

    assertThat(tree).isEqualTo(expected);
    assertThat(tree.toString()).isEqualTo(expected.toString());
  }
}
