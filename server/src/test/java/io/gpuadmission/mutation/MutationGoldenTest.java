package io.gpuadmission.mutation;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.SerializationFeature;
import io.fabric8.zjsonpatch.JsonPatch;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.GpuModelCatalog;
import io.gpuadmission.cluster.GpuNodeMapper;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.InvalidPolicyException;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One directory per scenario under {@code mutation/}: {@code pod.yaml} in; the exact JSON Patch
 * ({@code patch.json}), the pod after applying it ({@code expected.yaml}) and the warnings
 * ({@code warnings.txt}) out; optional {@code policy.yaml} and {@code nodes.yaml}. Run with
 * {@code -Dgolden.write=true} to rewrite patch.json after a deliberate change, then review it.
 */
class MutationGoldenTest {
  private static final Path CASES = Fixtures.path("mutation");
  private final PodMutator mutator = new PodMutator(PodMutator.standardRules(), KubernetesJson.mapper());

  static Stream<String> cases() throws IOException {
    try (var dirs = Files.list(CASES)) {
      return dirs.filter(Files::isDirectory).map(d -> d.getFileName().toString()).sorted().toList().stream();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void mutatesPodToExactPatchAndExpectedPod(String name) throws Exception {
    var dir = CASES.resolve(name);
    var input = Fixtures.podJson(dir.resolve("pod.yaml"));
    var context = context(dir, input.path("metadata").path("namespace").asText());

    var result = mutator.mutate(input, context);

    var patchFile = dir.resolve("patch.json");
    if (Boolean.getBoolean("golden.write")) {
      Files.writeString(
          patchFile,
          KubernetesJson.mapper().writer().with(SerializationFeature.INDENT_OUTPUT).writeValueAsString(result.patch()) + "\n");
    }
    assertThat(result.patch()).isEqualTo(Fixtures.jsonTree(patchFile));
    var patched = JsonPatch.apply(result.patch(), input);
    assertThat(Fixtures.canonicalPod(patched)).isEqualTo(Fixtures.podJson(dir.resolve("expected.yaml")));
    assertThat(result.warnings()).containsExactlyElementsOf(Fixtures.lines(dir.resolve("warnings.txt")));

    var again = mutator.mutate(patched, context);
    assertThat(again.patch()).as("mutating the mutated pod changes nothing").isEmpty();
  }

  private static MutationContext context(Path dir, String namespace) throws InvalidPolicyException {
    GpuPolicy policy =
        Files.exists(dir.resolve("policy.yaml"))
            ? PolicyParser.parse(Fixtures.text(dir.resolve("policy.yaml")))
            : PolicyParser.builtInDefault();
    var models =
        Files.exists(dir.resolve("nodes.yaml"))
            ? GpuModelCatalog.of(
                Fixtures.nodes(dir.resolve("nodes.yaml")).stream()
                    .map(n -> GpuNodeMapper.map(n, policy.nodeLabels()))
                    .toList())
            : GpuModelCatalog.EMPTY;
    return new MutationContext(namespace, policy, models);
  }
}
