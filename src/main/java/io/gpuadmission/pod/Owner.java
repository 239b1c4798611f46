package io.gpuadmission.pod;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.Optional;

/** A pod's controller: the workload that made it. */
public record Owner(String kind, String name, String uid) {

  public static Optional<Owner> controllerOf(Pod pod) {
    var owners = pod.getMetadata().getOwnerReferences();
    if (owners == null) {
      return Optional.empty();
    }
    return owners.stream()
        .filter(o -> Boolean.TRUE.equals(o.getController()))
        .findFirst()
        .map(o -> new Owner(o.getKind(), o.getName(), o.getUid() == null ? "" : o.getUid()));
  }

  /** Same workload: by uid when both have one, else by kind and name. */
  public boolean sameAs(Owner other) {
    if (!uid.isEmpty() && !other.uid.isEmpty()) {
      return uid.equals(other.uid);
    }
    return kind.equals(other.kind) && name.equals(other.name);
  }

  @Override
  public String toString() {
    return kind + " \"" + name + "\"";
  }
}
