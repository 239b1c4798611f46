package io.gpuadmission.validation;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.policy.TopologyPolicy;
import java.util.List;
import java.util.function.BooleanSupplier;

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

  static void check(WorkloadKind kind, JsonNode object, TopologyPolicy topology, ValidationResult result) {
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
        var workers = spec.path("pytorchReplicaSpecs").path("Worker").path("replicas").asInt(1);
        if (elastic.isObject()) {
          // The training operator defaults a missing bound to the other, both to the Worker replicas.
          var min = elastic.path("minReplicas").isNumber() ? elastic.path("minReplicas").asInt()
              : elastic.path("maxReplicas").asInt(workers);
          var max = elastic.path("maxReplicas").isNumber() ? elastic.path("maxReplicas").asInt() : min;
          if (min != max || min != workers) {
            result.refuse(
                NAME,
                "spec.elasticPolicy",
                "an elastic PyTorchJob (elasticPolicy minReplicas " + min + ", maxReplicas " + max + ", Worker replicas "
                    + workers + ") can change its number of Workers, but a gpu-topology gang has the fixed size "
                    + topology.replicaLabel() + " declares; remove elasticPolicy or the " + topology.jobLabel()
                    + " labels, or set minReplicas and maxReplicas to the Worker replicas");
          }
        }
      }
      default -> {}
    }
  }

  /**
   * A running StatefulSet gang whose pods' resources or gang labels change: its rolling update
   * replaces one pod at a time (and a scale-up adds pods of the new revision), and each new pod
   * would disagree with the members still running, so the update would stall on the first pod.
   * Scaling to zero first (or OnDelete and deleting all pods) replaces the gang as a whole.
   */
  static void checkUpdate(
      WorkloadKind kind,
      JsonNode object,
      JsonNode oldObject,
      TopologyPolicy topology,
      BooleanSupplier resourcesChanged,
      ValidationResult result) {
    if (kind != WorkloadKind.STATEFUL_SET || oldObject == null) {
      return;
    }
    var before = oldObject.path("spec");
    var after = object.path("spec");
    var running = before.path("replicas").asInt(1) > 0 && after.path("replicas").asInt(1) > 0;
    var rolling = !after.path("updateStrategy").path("type").asText("RollingUpdate").equals("OnDelete");
    if (!running || !rolling) {
      return;
    }
    String changed = null;
    if (resourcesChanged.getAsBoolean()) {
      changed = "the resources";
    } else {
      for (var label : List.of(topology.jobLabel(), topology.replicaLabel())) {
        var was = before.path("template").path("metadata").path("labels").path(label);
        var now = after.path("template").path("metadata").path("labels").path(label);
        if (!was.equals(now)) {
          changed = "label " + label;
          break;
        }
      }
    }
    if (changed != null) {
      result.refuse(
          NAME,
          "spec.template",
          "changing " + changed + " of a running gpu-topology StatefulSet would replace or add its pods one at a"
              + " time, and each new pod would disagree with the members still running; scale it to 0, apply the"
              + " change, then scale it back (or use updateStrategy OnDelete and delete all its pods)");
    }
  }
}
