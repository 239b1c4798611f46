package io.gpuadmission.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The kubelet gives a pod an environment variable for every Service of its namespace
 * (GPU_ADMISSION_PORT=tcp://10.96.65.149:443 for Service gpu-admission) unless the pod turns service
 * links off: every pod the install creates does, in every install, from kustomize and from Helm,
 * and the chart's hook pods too.
 */
class ServiceLinksTest {
  private static final YAMLMapper YAML = new YAMLMapper();

  static Stream<Arguments> installs() throws Exception {
    return Overlays.bothRenderers(List.of("manifests", "manifests/cert-manager", "manifests/scheduler", "manifests/monitoring",
        "manifests/node-agent", Overlays.combined()));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("installs")
  void everyPodOfTheInstallHasNoServiceLinks(Overlays.Renderer renderer, String dir) throws Exception {
    var pods = podSpecs(renderer.render(dir));
    assertThat(pods).as("pod templates").isNotEmpty();
    assertThat(pods).allSatisfy(p -> assertThat(p.path("enableServiceLinks").isBoolean() && !p.path("enableServiceLinks").asBoolean())
        .as("%s: enableServiceLinks false", p.path("_owner").asText()).isTrue());
  }

  @Test
  void everyPodOfTheWholeChartAndItsHooksHasNoServiceLinks() throws Exception {
    var values = List.of("scheduler.enabled=true", "nodeAgent.enabled=true", "monitoring.enabled=true", "controlPlane.enabled=true");
    var pods = podSpecs(Chart.template(values) + "\n---\n" + String.join("\n---\n", Chart.hooks(values)));
    assertThat(pods).extracting(p -> p.path("_owner").asText()).containsExactlyInAnyOrder(
        "Deployment gpu-admission", "Deployment gpu-scheduler", "DaemonSet gpu-admission-node-agent", "Job gpu-admission-uninstall", "Pod gpu-admission-test");
    assertThat(pods).allSatisfy(p -> assertThat(p.path("enableServiceLinks").asText()).as(p.path("_owner").asText()).isEqualTo("false"));
  }

  @Test
  void findsThePodSpecOfEveryWorkloadKind() throws Exception {
    var pods = podSpecs("kind: Pod\nmetadata: {name: a}\nspec: {enableServiceLinks: false}\n---\nkind: CronJob\nmetadata: {name: b}\n"
        + "spec: {jobTemplate: {spec: {template: {spec: {}}}}}\n---\nkind: StatefulSet\nmetadata: {name: c}\nspec: {template: {spec: {}}}\n---\nkind: Service\nmetadata: {name: d}\nspec: {}\n");
    assertThat(pods).extracting(p -> p.path("_owner").asText() + " " + p.path("enableServiceLinks").asText())
        .containsExactly("Pod a false", "CronJob b ", "StatefulSet c ");
  }

  /** The pod spec of every object that makes pods, each with its owner's kind and name as _owner. */
  static List<JsonNode> podSpecs(String yaml) throws Exception {
    var pods = new ArrayList<JsonNode>();
    try (var documents = YAML.readerFor(JsonNode.class).<JsonNode>readValues(yaml)) {
      while (documents.hasNext()) {
        var object = documents.next();
        if (object == null || !object.isObject()) {
          continue;
        }
        var kind = object.path("kind").asText();
        var spec = switch (kind) {
          case "Pod" -> object.path("spec");
          case "CronJob" -> object.path("spec").path("jobTemplate").path("spec").path("template").path("spec");
          default -> object.path("spec").path("template").path("spec");
        };
        if (spec.isObject()) {
          pods.add(((com.fasterxml.jackson.databind.node.ObjectNode) spec.deepCopy()).put("_owner", kind + " " + object.path("metadata").path("name").asText()));
        }
      }
    }
    return pods;
  }
}
