package io.gpuadmission.pod;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.Optional;

/**
 * The workload that made a pod. {@code revision} names the ReplicaSet when the workload is the
 * Deployment behind it: pods of two ReplicaSets of one Deployment (a rollout) are one workload in
 * two revisions, not two workloads sharing a gang name.
 */
public record Owner(String kind, String name, String uid, String revision) {
  /** The label the Deployment controller puts on its pods; the ReplicaSet is named {@code <deployment>-<hash>}. */
  static final String POD_TEMPLATE_HASH = "pod-template-hash";

  /** The pod's controller as it appears in its owner references. */
  public static Optional<Owner> controllerOf(Pod pod) {
    var owners = pod.getMetadata().getOwnerReferences();
    if (owners == null) {
      return Optional.empty();
    }
    return owners.stream()
        .filter(o -> Boolean.TRUE.equals(o.getController()))
        .findFirst()
        .map(o -> new Owner(o.getKind(), o.getName(), o.getUid() == null ? "" : o.getUid(), ""));
  }

  /** The pod's workload: its controller, or the Deployment behind a Deployment's ReplicaSet. */
  public static Optional<Owner> workloadOf(Pod pod) {
    return controllerOf(pod).map(owner -> deploymentBehind(owner, pod).orElse(owner));
  }

  private static Optional<Owner> deploymentBehind(Owner owner, Pod pod) {
    var labels = pod.getMetadata().getLabels();
    var hash = labels == null ? null : labels.get(POD_TEMPLATE_HASH);
    var suffix = "-" + hash;
    if (!"ReplicaSet".equals(owner.kind()) || hash == null || hash.isEmpty() || !owner.name().endsWith(suffix)
        || owner.name().length() == suffix.length()) {
      return Optional.empty();
    }
    var deployment = owner.name().substring(0, owner.name().length() - suffix.length());
    return Optional.of(new Owner("Deployment", deployment, "", owner.name()));
  }

  /** Same workload: by uid when both have one, else by kind and name. */
  public boolean sameAs(Owner other) {
    if (!uid.isEmpty() && !other.uid.isEmpty()) {
      return uid.equals(other.uid);
    }
    return kind.equals(other.kind) && name.equals(other.name);
  }

  /** Same workload, another revision: a ReplicaSet of the same Deployment. */
  public boolean earlierOrLaterRevisionOf(Owner other) {
    return sameAs(other) && !revision.isEmpty() && !other.revision.isEmpty() && !revision.equals(other.revision);
  }

  @Override
  public String toString() {
    return kind + " \"" + name + "\"";
  }
}
