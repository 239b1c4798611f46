package io.gpuadmission.kubescheduler;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The score plugins of a kube-scheduler v1.32 profile and their weights: upstream's defaults
 * ({@code pkg/scheduler/apis/config/v1/default_plugins.go}: every default plugin is enabled at
 * {@code multiPoint}; those that score, with the weight given there or 1, as {@code
 * getScoreWeights} in {@code framework/runtime/framework.go} defaults it) merged with a profile's
 * {@code plugins.multiPoint} and {@code plugins.score} as {@code mergePluginSet} does: a disabled
 * name (or {@code "*"}) drops default plugins, an enabled one replaces the default of that name or
 * is added, and a weight given at {@code score} takes precedence over the {@code multiPoint} one.
 */
public final class ScorePlugins {
  /** A plugin's score is 0–{@code MAX_NODE_SCORE} before its weight ({@code framework.MaxNodeScore}). */
  public static final int MAX_NODE_SCORE = 100;

  public static final String NODE_RESOURCES_FIT = "NodeResourcesFit";
  public static final String BALANCED_ALLOCATION = "NodeResourcesBalancedAllocation";

  /**
   * v1.32's default plugins that implement Score, in upstream's order, with the weights of {@code
   * getDefaultPlugins}. VolumeBinding scores only behind an alpha gate in v1.32
   * (StorageCapacityScoring's predecessor VolumeCapacityPriority) and skips pods without volumes,
   * but it is a score plugin with weight 1 all the same, so it counts in the range.
   */
  static final Map<String, Integer> DEFAULTS = defaults();

  private final Map<String, Integer> weights;

  private ScorePlugins(Map<String, Integer> weights) {
    this.weights = weights;
  }

  private static Map<String, Integer> defaults() {
    var map = new LinkedHashMap<String, Integer>();
    map.put("TaintToleration", 3);
    map.put("NodeAffinity", 2);
    map.put(NODE_RESOURCES_FIT, 1);
    map.put("VolumeBinding", 1);
    map.put("PodTopologySpread", 2);
    map.put("InterPodAffinity", 2);
    map.put(BALANCED_ALLOCATION, 1);
    map.put("ImageLocality", 1);
    return java.util.Collections.unmodifiableMap(map);
  }

  /** The defaults alone (a configuration without profiles, or a profile without {@code plugins}). */
  public static ScorePlugins defaultProfile() {
    return new ScorePlugins(DEFAULTS);
  }

  /** The score plugins of a profile ({@code profiles[i]} of a KubeSchedulerConfiguration). */
  public static ScorePlugins of(JsonNode profile) {
    var plugins = profile.path("plugins");
    var multiPoint = merge(DEFAULTS, plugins.path("multiPoint"));
    var score = new LinkedHashMap<String, Integer>();
    multiPoint.forEach((name, weight) -> score.put(name, weight == 0 ? 1 : weight));
    return new ScorePlugins(merge(score, plugins.path("score")));
  }

  /** {@code mergePluginSet}: disabled names drop defaults, enabled ones replace them or are appended. */
  private static Map<String, Integer> merge(Map<String, Integer> defaults, JsonNode custom) {
    var disabled = custom.path("disabled").findValuesAsText("name");
    var merged = new LinkedHashMap<String, Integer>();
    if (!disabled.contains("*")) {
      defaults.forEach((name, weight) -> {
        if (!disabled.contains(name)) {
          merged.put(name, weight);
        }
      });
    }
    for (var plugin : custom.path("enabled")) {
      var weight = plugin.path("weight").asInt(0);
      merged.put(plugin.path("name").asText(), weight == 0 ? 1 : weight);
    }
    return merged;
  }

  /** Enabled score plugins by name, with their weights. */
  public Map<String, Integer> weights() {
    return weights;
  }

  /** The weight of {@code plugin}, 0 when it does not score in this profile. */
  public int weight(String plugin) {
    return weights.getOrDefault(plugin, 0);
  }

  /**
   * How far apart two nodes' sums of plugin scores can be: every plugin scores 0–100 before its
   * weight (after normalisation), so the sum of weight × 100.
   */
  public long range() {
    return weights.values().stream().mapToLong(w -> (long) w * MAX_NODE_SCORE).sum();
  }

  /** Names, for messages. */
  public List<String> names() {
    return List.copyOf(weights.keySet());
  }
}
