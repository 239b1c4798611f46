package io.gpuadmission.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MatchCondition;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The matchConditions of manifests/base/webhooks.yaml decide which pods fail closed. They are read
 * from the file and evaluated with Google's CEL on fixture pods, so that a typo cannot quietly
 * send GPU pods to the fail-open webhook.
 */
class MatchConditionsTest {
  /** As the API server declares them for matchConditions: the standard macros, object and oldObject. */
  private static final CelCompiler COMPILER =
      CelCompilerFactory.standardCelCompilerBuilder()
          .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
          .addVar("object", SimpleType.DYN)
          .addVar("oldObject", SimpleType.DYN)
          .build();
  private static final CelRuntime RUNTIME = CelRuntimeFactory.standardCelRuntimeBuilder().build();
  private static List<MatchCondition> gpuPods;
  private static List<MatchCondition> otherPods;
  private static List<MatchCondition> validatePods;

  @BeforeAll
  @SuppressWarnings("unchecked")
  static void readWebhooks() throws IOException {
    var objects = (List<Object>) new KubernetesSerialization().unmarshal(Files.readString(Path.of("manifests/base/webhooks.yaml")));
    var mutating = (MutatingWebhookConfiguration) objects.get(0);
    var validating = (ValidatingWebhookConfiguration) objects.get(1);
    gpuPods = mutatingConditions(mutating, "gpu-pods.mutate.gpu-admission.io");
    otherPods = mutatingConditions(mutating, "other-pods.mutate.gpu-admission.io");
    validatePods = validating.getWebhooks().stream().filter(w -> w.getName().equals("pods.validate.gpu-admission.io"))
        .findFirst().orElseThrow().getMatchConditions();
  }

  private static List<MatchCondition> mutatingConditions(MutatingWebhookConfiguration config, String name) {
    return config.getWebhooks().stream().filter(w -> w.getName().equals(name)).findFirst().orElseThrow().getMatchConditions();
  }

  /** True when every condition holds, as the API server decides whether to call the webhook. */
  private static boolean matches(List<MatchCondition> conditions, JsonNode pod) {
    assertThat(conditions).as("matchConditions").isNotEmpty();
    var object = Map.of("object", CelValues.of(pod));
    for (var condition : conditions) {
      try {
        CelAbstractSyntaxTree ast = COMPILER.compile(condition.getExpression()).getAst();
        if (!Boolean.TRUE.equals(RUNTIME.createProgram(ast).eval(object))) {
          return false;
        }
      } catch (Exception e) {
        throw new AssertionError("condition " + condition.getName() + " fails on " + pod.path("metadata").path("name"), e);
      }
    }
    return true;
  }

  private static JsonNode pod(String file) {
    return Fixtures.yamlTree(Fixtures.path(file));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    // fixture,                                    fail-closed mutate, validated
    "cel/pod-gpu-limits-only.yaml,                 true,  true",
    "cel/pod-gpu-requests-only.yaml,               true,  true",
    "cel/pod-gpu-second-container.yaml,            true,  true",
    "cel/pod-gpu-init-container-only.yaml,         true,  true",
    "cel/pod-gpu-mig-slice.yaml,                   true,  true",
    "mutation/gpu-init-containers/pod.yaml,        true,  true",
    "mutation/cgpu-test-pod/pod.yaml,              true,  true",
    "mutation/pytorch-dist-nccl-worker/pod.yaml,   true,  true",
    "cel/pod-cpu-with-resources.yaml,              false, false",
    "cel/pod-cpu-no-resources.yaml,                false, false",
    "cel/pod-cpu-empty-resources.yaml,             false, false",
    "cel/pod-cpu-other-labels.yaml,                false, false",
    "mutation/daemonset-pod/pod.yaml,              false, false",
    "cel/pod-topology-label-without-gpu.yaml,      false, true",
  })
  void sendsGpuPodsToTheFailClosedWebhooksAndOthersToTheFailOpenOne(String file, boolean gpu, boolean validated) {
    var pod = pod(file);

    assertThat(matches(gpuPods, pod)).as("gpu-pods.mutate (failurePolicy Fail)").isEqualTo(gpu);
    assertThat(matches(otherPods, pod)).as("other-pods.mutate (failurePolicy Ignore)").isEqualTo(!gpu);
    assertThat(matches(validatePods, pod)).as("pods.validate (failurePolicy Fail)").isEqualTo(validated);
  }

  /**
   * Over every fixture pod (and each with its GPU resources moved between limits, requests and
   * init containers): exactly one mutating webhook is called, every pod the default policy counts
   * as a GPU pod fails closed, and so does every pod of a topology job.
   */
  @Test
  void failClosedAndFailOpenConditionsAreExactComplementsAndCoverThePolicysGpuPods() throws IOException {
    var policy = PolicyParser.builtInDefault();
    var pods = new ArrayList<JsonNode>();
    try (Stream<Path> files = Files.walk(Fixtures.ROOT)) {
      for (var file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
        var tree = Fixtures.yamlTree(file);
        if ("Pod".equals(tree.path("kind").asText())) {
          pods.add(tree);
          pods.addAll(CelValues.variants(tree));
        }
      }
    }
    assertThat(pods).hasSizeGreaterThan(60);
    for (var pod : pods) {
      var name = pod.path("metadata").path("name").asText();
      var gpu = matches(gpuPods, pod);
      assertThat(matches(otherPods, pod)).as("exactly one mutating webhook for %s", name).isEqualTo(!gpu);
      if (CelValues.asksFor(pod, policy::isGpuResource)) {
        assertThat(gpu).as("policy GPU pod %s fails closed", name).isTrue();
        assertThat(matches(validatePods, pod)).as("policy GPU pod %s is validated", name).isTrue();
      }
      if (pod.path("metadata").path("labels").has(policy.topology().jobLabel())) {
        assertThat(matches(validatePods, pod)).as("topology pod %s is validated", name).isTrue();
      }
    }
  }


  /** The chart's webhooks carry exactly the conditions tested here. */
  @Test
  void chartsWebhooksHaveTheseConditions() throws Exception {
    var objects = Overlays.objects(Chart.template(List.of()));
    var mutating = (MutatingWebhookConfiguration) RenderedObjects.find(objects, "MutatingWebhookConfiguration", null, "gpu-admission");
    var validating = (ValidatingWebhookConfiguration) RenderedObjects.find(objects, "ValidatingWebhookConfiguration", null, "gpu-admission");
    assertThat(mutatingConditions(mutating, "gpu-pods.mutate.gpu-admission.io")).isEqualTo(gpuPods);
    assertThat(mutatingConditions(mutating, "other-pods.mutate.gpu-admission.io")).isEqualTo(otherPods);
    assertThat(validating.getWebhooks().stream().filter(w -> w.getName().equals("pods.validate.gpu-admission.io")).findFirst().orElseThrow().getMatchConditions())
        .isEqualTo(validatePods);
  }
}
