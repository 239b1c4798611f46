package io.gpuadmission.kubescheduler;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What of a {@code kubescheduler.config.k8s.io/v1} KubeSchedulerConfiguration decides where a GPU
 * pod goes: the profile's score plugins, how many feasible nodes it looks for ({@code
 * percentageOfNodesToScore}, the profile's over the global one; 0 or absent: adaptive), and the
 * extender (its weight, and the resources that make a pod its business).
 */
public record SchedulerConfiguration(ScorePlugins plugins, int percentageOfNodesToScore, Optional<Extender> extender) {
  /** An {@code extenders[]} entry. */
  public record Extender(String urlPrefix, long weight, List<String> managedResources, boolean filter, boolean prioritize, boolean bind) {
    /** kube-scheduler sends a pod to the extender only when it asks for one of these (or when none are listed). */
    public boolean interested(java.util.Set<String> podResources) {
      return managedResources.isEmpty() || managedResources.stream().anyMatch(podResources::contains);
    }
  }

  /** The configuration as a file ({@code manifests/control-plane/kube-scheduler-config.yaml}), first profile. */
  public static SchedulerConfiguration read(Path file) throws IOException {
    return parse(Files.readString(file), Optional.empty());
  }

  /** The configuration inside a ConfigMap manifest under {@code key} (the second scheduler's). */
  public static SchedulerConfiguration readConfigMap(Path file, String key, String profile) throws IOException {
    var configMap = new YAMLMapper().readTree(file.toFile());
    return parse(configMap.path("data").path(key).asText(), Optional.of(profile));
  }

  /** {@code text} read for the profile of {@code schedulerName} (the first profile when empty). */
  public static SchedulerConfiguration parse(String text, Optional<String> schedulerName) throws IOException {
    var root = new YAMLMapper().readTree(text);
    if (!"KubeSchedulerConfiguration".equals(root.path("kind").asText())) {
      throw new IllegalArgumentException("not a KubeSchedulerConfiguration: kind " + root.path("kind").asText());
    }
    JsonNode profile = null;
    for (var candidate : root.path("profiles")) {
      if (schedulerName.isEmpty() || schedulerName.get().equals(candidate.path("schedulerName").asText("default-scheduler"))) {
        profile = candidate;
        break;
      }
    }
    if (profile == null && schedulerName.isPresent() && root.path("profiles").size() > 0) {
      throw new IllegalArgumentException("no profile for scheduler " + schedulerName.get());
    }
    var plugins = profile == null ? ScorePlugins.defaultProfile() : ScorePlugins.of(profile);
    var percentage =
        profile != null && profile.has("percentageOfNodesToScore")
            ? profile.path("percentageOfNodesToScore").asInt()
            : root.path("percentageOfNodesToScore").asInt(0);
    Optional<Extender> extender = Optional.empty();
    if (root.path("extenders").size() > 0) {
      var e = root.path("extenders").get(0);
      var managed = new ArrayList<String>();
      e.path("managedResources").forEach(r -> managed.add(r.path("name").asText()));
      extender =
          Optional.of(
              new Extender(
                  e.path("urlPrefix").asText(),
                  e.path("weight").asLong(0),
                  managed,
                  !e.path("filterVerb").asText("").isEmpty(),
                  !e.path("prioritizeVerb").asText("").isEmpty(),
                  !e.path("bindVerb").asText("").isEmpty()));
    }
    return new SchedulerConfiguration(plugins, percentage, extender);
  }

  /** This configuration with another extender weight (what a user who kept another gets). */
  public SchedulerConfiguration withExtenderWeight(long weight) {
    return new SchedulerConfiguration(
        plugins, percentageOfNodesToScore, extender.map(e -> new Extender(e.urlPrefix(), weight, e.managedResources(), e.filter(), e.prioritize(), e.bind())));
  }

  public SchedulerConfiguration withPercentageOfNodesToScore(int percentage) {
    return new SchedulerConfiguration(plugins, percentage, extender);
  }
}
