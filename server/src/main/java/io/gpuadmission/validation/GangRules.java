package io.gpuadmission.validation;

import io.gpuadmission.pod.GangKey;
import io.gpuadmission.pod.GangMember;
import io.gpuadmission.pod.ResourceAsk.Difference;
import io.gpuadmission.policy.TopologyPolicy;
import java.util.List;

/**
 * The checks across the members of one gang (pods sharing a namespace and gpu-topology value):
 * one owner, one declared replica count, no more live members than that, the same resources.
 * ACK's topology scheduler waits forever for a gang that breaks any of them.
 */
final class GangRules {
  static final String CONSISTENCY = "gang-consistency";
  static final String COLLISION = "gang-collision";

  private GangRules() {}

  static void check(
      GangKey key, GangMember pod, List<GangMember> members, TopologyPolicy topology, ValidationResult result) {
    var gang = "gang \"" + key.displayName() + "\": ";
    var replicaLabel = topology.replicaLabel();
    for (var member : members) {
      if (pod.owner().isPresent() && member.owner().isPresent() && !pod.owner().get().sameAs(member.owner().get())) {
        result.refuse(
            COLLISION,
            "metadata.labels",
            gang + "the name is already used by pods of " + member.owner().get() + " (member " + member.name()
                + "); give this job its own " + topology.jobLabel() + " value");
        return;
      }
    }
    for (var member : members) {
      if (!member.replicas().equals(pod.replicas())) {
        result.refuse(
            ReplicaLabelRule.NAME,
            "metadata.labels",
            gang + "pod declares " + replicaLabel + " \"" + pod.replicas() + "\" but member " + member.name()
                + " declares \"" + member.replicas() + "\"; all pods of a gpu-topology job must declare the same total");
        return;
      }
    }
    var declared = ReplicaLabelRule.count(pod.replicas());
    if (declared.isPresent() && members.size() + 1 > declared.getAsInt()) {
      var previous = otherRevision(pod, members);
      if (previous != null) {
        var owner = previous.owner().get();
        result.refuse(
            GangLifecycleRules.NAME,
            "metadata.ownerReferences",
            gang + "pods of ReplicaSet \"" + owner.revision() + "\" (another revision of " + owner + ", member "
                + previous.name() + ") are still running and the gang declares gpu-topology-replica \"" + pod.replicas()
                + "\"; this pod would be member " + (members.size() + 1) + ": a gpu-topology Deployment must use"
                + " strategy.type: Recreate so that old members are gone before new ones start");
        return;
      }
      result.refuse(
          ReplicaLabelRule.NAME,
          "metadata.labels",
          gang + "already has " + members.size() + " live members (" + names(members) + ") and declares " + replicaLabel + " \""
              + pod.replicas() + "\"; this pod would be member " + (members.size() + 1)
              + ": raise " + replicaLabel + " or delete the leftover pods");
      return;
    }
    for (var member : members) {
      var difference = pod.ask().firstDifference(member.ask());
      if (difference.isPresent()) {
        result.refuse(
            CONSISTENCY,
            "spec.containers.resources",
            gang + describe(difference.get(), pod, member)
                + "; all pods of a gpu-topology job must request the same resources");
        return;
      }
    }
  }

  /** Up to five member names: a pod admitted moments ago may not be listed by kubectl yet, but is named. */
  private static String names(List<GangMember> members) {
    var shown = members.stream().map(GangMember::name).sorted().limit(5).toList();
    return String.join(", ", shown) + (members.size() > shown.size() ? ", …" : "");
  }

  private static GangMember otherRevision(GangMember pod, List<GangMember> members) {
    if (pod.owner().isEmpty()) {
      return null;
    }
    for (var member : members) {
      if (member.owner().isPresent() && member.owner().get().earlierOrLaterRevisionOf(pod.owner().get())) {
        return member;
      }
    }
    return null;
  }

  private static String describe(Difference d, GangMember pod, GangMember member) {
    switch (d.field()) {
      case "container":
        return "pod has container \"" + d.container() + "\" but member " + member.name() + " has not";
      case "missing-container":
        return "member " + member.name() + " has container \"" + d.container() + "\" but this pod has not";
      default:
        var subject = pod.ask().containers().size() > 1 ? "container \"" + d.container() + "\"" : "pod";
        var verb = d.field().equals("limits") ? "asks" : "requests";
        return subject + " " + verb + " " + d.resource() + "=" + d.mine().map(Object::toString).orElse("none")
            + " but member " + member.name() + " " + verb + " " + d.theirs().map(Object::toString).orElse("none");
    }
  }
}
