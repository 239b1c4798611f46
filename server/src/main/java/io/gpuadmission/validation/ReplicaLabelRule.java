package io.gpuadmission.validation;

import io.gpuadmission.pod.TopologyJob;
import java.util.OptionalInt;

/** {@code gpu-topology-replica} is a positive integer, or the literal "true" Arena writes. */
public final class ReplicaLabelRule implements PodRule {
  static final String NAME = "replica-count";

  @Override
  public void check(PodSubject s, ValidationResult result) {
    var topology = s.policy().topology();
    TopologyJob.of(s.pod(), topology)
        .filter(job -> !TopologyJob.ARENA_MARKER.equals(job.replicas()) && count(job.replicas()).isEmpty())
        .ifPresent(
            job ->
                result.refuse(
                    NAME,
                    "metadata.labels." + topology.replicaLabel(),
                    s.prefix() + "label " + topology.replicaLabel() + " is \"" + job.replicas()
                        + "\"; it must be a positive integer (the total number of pods of the job), or \"true\" as Arena writes it"));
  }

  /** The declared count, empty unless a positive integer. */
  static OptionalInt count(String replicas) {
    try {
      var n = Integer.parseInt(replicas);
      return n > 0 ? OptionalInt.of(n) : OptionalInt.empty();
    } catch (NumberFormatException notANumber) {
      return OptionalInt.empty();
    }
  }
}
