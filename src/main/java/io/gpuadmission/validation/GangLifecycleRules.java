package io.gpuadmission.validation;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * What a workload's controller does over time must keep one gang per gpu-topology value: a
 * Deployment rolling update and overlapping CronJob runs would put two generations of pods under
 * one value at once (more members than declared, or members that disagree), and an elastic
 * PyTorchJob changes its size while the label declares a fixed one. Each is refused at apply with
 * the setting that fixes it, rather than left to fail pod by pod in a controller's events.
 */
final class GangLifecycleRules {
  static final String NAME = "gang-lifecycle";

  private GangLifecycleRules() {}

  static void check(WorkloadKind kind, JsonNode object, ValidationResult result) {
    var spec = object.path("spec");
    switch (kind) {
      case DEPLOYMENT -> {
        var strategy = spec.path("strategy").path("type").asText("RollingUpdate");
        if (!strategy.equals("Recreate")) {
          result.refuse(
              NAME,
              "spec.strategy.type",
              "a gpu-topology Deployment must use strategy.type: Recreate (it has " + strategy + "); a rolling update"
                  + " runs pods of the old and the new ReplicaSet at once under one gpu-topology value, more members"
                  + " than gpu-topology-replica declares, and the gang never starts");
        }
      }
      case CRON_JOB -> {
        var concurrency = spec.path("concurrencyPolicy").asText("Allow");
        if (concurrency.equals("Allow")) {
          result.refuse(
              NAME,
              "spec.concurrencyPolicy",
              "a gpu-topology CronJob must set concurrencyPolicy: Forbid or Replace (it has Allow); with Allow two"
                  + " runs can overlap under one gpu-topology value and neither gang can start");
        }
      }
      case PYTORCH_JOB -> {
        var elastic = spec.path("elasticPolicy");
        if (elastic.isObject() && !fixedSize(elastic)) {
          result.refuse(
              NAME,
              "spec.elasticPolicy",
              "an elastic PyTorchJob (elasticPolicy minReplicas " + elastic.path("minReplicas").asText("unset")
                  + ", maxReplicas " + elastic.path("maxReplicas").asText("unset") + ") changes its number of"
                  + " Workers, but a gpu-topology gang has the fixed size gpu-topology-replica declares; remove"
                  + " elasticPolicy or the gpu-topology labels, or set minReplicas equal to maxReplicas");
        }
      }
      default -> {}
    }
  }

  private static boolean fixedSize(JsonNode elastic) {
    var min = elastic.path("minReplicas");
    var max = elastic.path("maxReplicas");
    return min.isNumber() && max.isNumber() && min.asInt() == max.asInt();
  }
}
