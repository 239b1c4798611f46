package io.gpuadmission.validation;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The workload kinds whose pod templates are checked at apply time, and where each keeps its
 * templates. Kubeflow jobs are read as plain JSON: their CRDs need not be known to this webhook.
 */
public enum WorkloadKind {
  DEPLOYMENT("apps", "Deployment", false),
  STATEFUL_SET("apps", "StatefulSet", false),
  REPLICA_SET("apps", "ReplicaSet", false),
  JOB("batch", "Job", false),
  CRON_JOB("batch", "CronJob", false),
  PYTORCH_JOB("kubeflow.org", "PyTorchJob", true),
  TF_JOB("kubeflow.org", "TFJob", true),
  MPI_JOB("kubeflow.org", "MPIJob", true);

  private static final Set<String> LAUNCHER_ROLES = Set.of("Launcher");
  private final String group;
  private final String kind;
  private final boolean trainingJob;

  WorkloadKind(String group, String kind, boolean trainingJob) {
    this.group = group;
    this.kind = kind;
    this.trainingJob = trainingJob;
  }

  public static Optional<WorkloadKind> of(String group, String kind) {
    for (var k : values()) {
      if (k.group.equals(group) && k.kind.equals(kind)) {
        return Optional.of(k);
      }
    }
    return Optional.empty();
  }

  public String kind() {
    return kind;
  }

  public boolean trainingJob() {
    return trainingJob;
  }

  /**
   * True for MPIJob's Launcher: the operator marks its pods as the launcher, which is no gang
   * member unless it asks for whole GPUs (runLauncherAsWorker), as {@code TopologyJob} decides.
   */
  public boolean launcherRole(String role) {
    return this == MPI_JOB && LAUNCHER_ROLES.contains(role);
  }

  public List<PodTemplate> templates(JsonNode object) {
    var spec = object.path("spec");
    return switch (this) {
      case DEPLOYMENT, STATEFUL_SET, REPLICA_SET ->
          single(spec.path("template"), spec.path("replicas").asInt(1), "spec.template");
      case JOB -> single(spec.path("template"), runningJobPods(spec), "spec.template");
      case CRON_JOB ->
          single(
              spec.path("jobTemplate").path("spec").path("template"),
              runningJobPods(spec.path("jobTemplate").path("spec")),
              "spec.jobTemplate.spec.template");
      case PYTORCH_JOB -> replicaSpecs(spec, "pytorchReplicaSpecs");
      case TF_JOB -> replicaSpecs(spec, "tfReplicaSpecs");
      case MPI_JOB -> replicaSpecs(spec, "mpiReplicaSpecs");
    };
  }

  /**
   * The most pods a Job runs at once: the Job controller never runs more than the completions
   * still to go, so {@code parallelism: 4, completions: 2} runs 2 (parallelism defaults to 1;
   * without completions it is a work queue of {@code parallelism} pods).
   */
  static int runningJobPods(JsonNode jobSpec) {
    var parallelism = jobSpec.path("parallelism").asInt(1);
    var completions = jobSpec.path("completions");
    return completions.isNumber() ? Math.min(parallelism, completions.asInt()) : parallelism;
  }

  private static List<PodTemplate> single(JsonNode template, int replicas, String path) {
    return template.isObject() ? List.of(new PodTemplate("pod", replicas, path, template)) : List.of();
  }

  private static List<PodTemplate> replicaSpecs(JsonNode spec, String field) {
    var templates = new ArrayList<PodTemplate>();
    var specs = spec.path(field);
    specs.fieldNames()
        .forEachRemaining(
            role -> {
              var replicaSpec = specs.path(role);
              if (replicaSpec.path("template").isObject()) {
                templates.add(
                    new PodTemplate(
                        role, replicaSpec.path("replicas").asInt(1), "spec." + field + "." + role + ".template", replicaSpec.path("template")));
              }
            });
    return templates;
  }
}
