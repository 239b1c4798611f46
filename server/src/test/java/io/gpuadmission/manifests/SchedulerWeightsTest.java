package io.gpuadmission.manifests;

import io.gpuadmission.manifests.Overlays.Renderer;
import org.junit.jupiter.params.provider.MethodSource;
import static io.gpuadmission.manifests.RenderedObjects.find;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.gpuadmission.kubescheduler.KubeSchedulerModel;
import io.gpuadmission.kubescheduler.SchedulerConfiguration;
import io.gpuadmission.kubescheduler.ScorePlugins;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every shipped scheduler configuration makes the allocator's choice the node kube-scheduler
 * binds: prioritize gives that node 10 and every other at most 9, so one step of the extender's
 * score (weight × 10 points) must outweigh all that the profile's score plugins can give (each
 * plugin's 0–100 × its weight, v1.32's defaults merged with the profile as kube-scheduler merges
 * them), and every feasible node must reach the extender ({@code percentageOfNodesToScore: 100}).
 */
class SchedulerWeightsTest {
  /** v1.32's default score plugins: TaintToleration 3, NodeAffinity 2, NodeResourcesFit 1, VolumeBinding 1, PodTopologySpread 2, InterPodAffinity 2, NodeResourcesBalancedAllocation 1, ImageLocality 1. */
  private static final long DEFAULT_RANGE = 1300;

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("schedulerInstalls")
  void secondSchedulersExtenderStepOutweighsItsProfilesScorePlugins(Renderer renderer, String dir) throws Exception {
    var objects = renderer.objects("combined".equals(dir) ? Overlays.combined() : dir);
    var configMap = (ConfigMap) find(objects, "ConfigMap", "gpu-admission", "gpu-scheduler-config");

    var config = SchedulerConfiguration.parse(configMap.getData().get("config.yaml"), Optional.of("gpu-scheduler"));

    assertAllocatorChoiceWins(config);
  }

  @Test
  void controlPlaneStanzaOutweighsTheDefaultProfile() throws Exception {
    var config = SchedulerConfiguration.read(Path.of("manifests/control-plane/kube-scheduler-config.yaml"));

    assertAllocatorChoiceWins(config);
  }

  @Test
  void rangeFollowsTheProfilesPluginsAsKubeSchedulerMergesThem() throws Exception {
    var profile =
        """
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
        - schedulerName: gpu
          plugins:
            multiPoint:
              disabled: [{name: ImageLocality}]
              enabled: [{name: NodeAffinity, weight: 5}]
            score:
              enabled: [{name: NodeResourcesFit, weight: 4}, {name: MyGpuScore, weight: 2}]
        """;

    var plugins = SchedulerConfiguration.parse(profile, Optional.of("gpu")).plugins();

    // ImageLocality gone, NodeAffinity 2 -> 5, NodeResourcesFit 1 -> 4 at score, MyGpuScore added.
    assertThat(plugins.weights())
        .containsExactlyEntriesOf(
            orderedOf(
                "TaintToleration", 3, "NodeAffinity", 5, "NodeResourcesFit", 4, "VolumeBinding", 1,
                "PodTopologySpread", 2, "InterPodAffinity", 2, "NodeResourcesBalancedAllocation", 1, "MyGpuScore", 2));
    assertThat(plugins.range()).isEqualTo(2000);
    var none = SchedulerConfiguration.parse(profile.replace("disabled: [{name: ImageLocality}]", "disabled: [{name: \"*\"}]"), Optional.of("gpu")).plugins();
    assertThat(none.weights()).containsExactlyEntriesOf(orderedOf("NodeAffinity", 5, "NodeResourcesFit", 4, "MyGpuScore", 2));
  }

  private static void assertAllocatorChoiceWins(SchedulerConfiguration config) {
    var extender = config.extender().orElseThrow();
    var step = extender.weight() * (ScorePlugins.MAX_NODE_SCORE / KubeSchedulerModel.MAX_EXTENDER_PRIORITY);
    assertThat(config.plugins().range()).as("score plugins %s", config.plugins().names()).isEqualTo(DEFAULT_RANGE);
    assertThat(step).as("one step of the extender's score, weight %d", extender.weight()).isGreaterThan(config.plugins().range());
    assertThat(extender.prioritize()).isTrue();
    assertThat(config.percentageOfNodesToScore()).isEqualTo(100);
  }

  private static Map<String, Integer> orderedOf(Object... pairs) {
    var map = new java.util.LinkedHashMap<String, Integer>();
    for (int i = 0; i < pairs.length; i += 2) {
      map.put((String) pairs[i], (Integer) pairs[i + 1]);
    }
    return map;
  }

  static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> schedulerInstalls() {
    return Overlays.bothRenderers(java.util.List.of("manifests/scheduler", "combined"));
  }

  static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> schedulerInstall() {
    return Overlays.bothRenderers(java.util.List.of("manifests/scheduler"));
  }
}
