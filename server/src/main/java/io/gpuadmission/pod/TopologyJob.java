package io.gpuadmission.pod;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.policy.TopologyPolicy;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A pod's membership of a topology-aware training job, from its labels. Arena writes the literal
 * {@code "true"} in both labels; then the job is named after the pod's controller. An MPIJob's
 * launcher carries the job's labels but is no member: it runs mpirun and asks for no GPU (unless
 * it asks for whole GPUs: then it runs as a worker too, mpi-operator's runLauncherAsWorker).
 */
public record TopologyJob(String label, String replicas, String displayName) {
  public static final String ARENA_MARKER = "true";

  /**
   * Labels by which MPI operators mark the launcher pod: mpi-operator v2 ({@code job-role}),
   * Kubeflow training-operator ({@code replica-type}), mpi-operator v1 ({@code mpi-job-role}) and
   * v1alpha ({@code mpi_role_type}).
   */
  public static final List<String> LAUNCHER_ROLE_LABELS =
      List.of("training.kubeflow.org/job-role", "training.kubeflow.org/replica-type", "mpi-job-role", "mpi_role_type");

  public static final String LAUNCHER_ROLE = "launcher";

  public static Optional<TopologyJob> of(Pod pod, TopologyPolicy topology) {
    var labels = pod.getMetadata().getLabels();
    if (labels == null || (isLauncher(labels) && !asksWholeGpus(pod, topology))) {
      return Optional.empty();
    }
    var label = labels.get(topology.jobLabel());
    var replicas = labels.get(topology.replicaLabel());
    if (label == null || replicas == null) {
      return Optional.empty();
    }
    return Optional.of(new TopologyJob(label, replicas, displayName(pod, label)));
  }

  /** True when the pod asks whole GPUs under either name the topology policy knows. */
  public static boolean asksWholeGpus(Pod pod, TopologyPolicy topology) {
    return PodResources.asksFor(pod, r -> r.equals(topology.resourceName()) || r.equals(topology.wholeGpuResource()));
  }

  private static boolean isLauncher(Map<String, String> labels) {
    for (var key : LAUNCHER_ROLE_LABELS) {
      if (LAUNCHER_ROLE.equalsIgnoreCase(labels.get(key))) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether its pods are placed together as a gang: not for a job of one replica (nothing to wait
   * for), nor for Arena's {@code "true"} count (the job's size is only in its workload object).
   */
  public boolean placedTogether() {
    var count = replicas.trim();
    return !count.equals("1") && !count.equalsIgnoreCase(ARENA_MARKER);
  }

  public boolean arenaStyle() {
    return ARENA_MARKER.equals(label);
  }

  private static String displayName(Pod pod, String label) {
    if (!ARENA_MARKER.equals(label)) {
      return label;
    }
    var owners = pod.getMetadata().getOwnerReferences();
    if (owners != null) {
      for (var owner : owners) {
        // A controller reference without a name cannot tell jobs apart: the pod's own name does.
        if (Boolean.TRUE.equals(owner.getController()) && owner.getName() != null && !owner.getName().isEmpty()) {
          return owner.getName();
        }
      }
    }
    var name = pod.getMetadata().getName();
    return name != null && !name.isEmpty() ? name : String.valueOf(pod.getMetadata().getGenerateName());
  }
}
