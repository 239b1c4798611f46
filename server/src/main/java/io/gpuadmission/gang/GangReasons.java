package io.gpuadmission.gang;

import io.gpuadmission.placement.MemberPlan;
import io.gpuadmission.placement.PlacementDecider.MemberPlace;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What a gang's members are told, in one place, so every replica and every member says the same. */
final class GangReasons {
  private GangReasons() {}

  static String waiting(GangKey gang, GangStatus.Waiting waiting) {
    return gang.quoted() + ": " + waiting.exist() + " of " + waiting.expected() + " members exist, waiting for the rest";
  }

  static String disagreeing(GangKey gang, GangStatus.Disagreeing disagreeing) {
    return gang.quoted() + ": " + disagreeing.reason() + "; the gang is not placed until its members agree";
  }

  static String noRoom(GangKey gang, GangStatus.Complete complete, GangPlanning.Outcome.NoRoom noRoom) {
    var what = gang.quoted() + ": needs " + complete.unbound().size() + " × " + complete.gpusEach() + " GPU"
        + (complete.gpusEach() == 1 ? "" : "s") + (complete.nvlink() ? " on NVLink" : "");
    if (!noRoom.quota().isEmpty()) {
      return what + ", and its team quota does not admit them all: " + noRoom.quota();
    }
    if (noRoom.eligibleNodes() == 0) {
      return what + ", and no node with GPUs matches its members' nodeSelector, required node affinity and tolerations"
          + (complete.perNode() == 1 ? " with their host ports free" : "");
    }
    var perNode = complete.perNode() == 1 && complete.unbound().size() > 1 ? ", one per node (the members use host ports)" : "";
    var bound = complete.bound().isEmpty() ? "" : " (" + complete.bound().size() + " of " + complete.expected() + " already bound)";
    return what + perNode + bound + ", the cluster has room for " + noRoom.room()
        + " (on the " + noRoom.eligibleNodes() + " node" + (noRoom.eligibleNodes() == 1 ? "" : "s") + " its members may run on)"
        + allocatableLimits(noRoom.allocatableLimits());
  }

  /** At most this many short nodes are named: the reason is repeated for every node of a filter answer. */
  private static final int NAMED_NODES = 5;

  /**
   * {@code ; status.allocatable gives fewer GPUs than the node labels count on gpu-b (4
   * aliyun.com/gpu allocatable) and gpu-c (...)}: nodes whose device plugin reports fewer GPUs than
   * they show free (unhealthy GPUs, a plugin restarting), which kube-scheduler counts by.
   */
  private static String allocatableLimits(Map<String, String> limits) {
    if (limits.isEmpty()) {
      return "";
    }
    var parts = new ArrayList<String>();
    limits.entrySet().stream().limit(NAMED_NODES).forEach(e -> parts.add(e.getKey() + " (" + e.getValue() + ")"));
    if (limits.size() > NAMED_NODES) {
      parts.add((limits.size() - NAMED_NODES) + " more");
    }
    var text = parts.size() == 1 ? parts.get(0) : String.join(", ", parts.subList(0, parts.size() - 1)) + " and " + parts.get(parts.size() - 1);
    return "; status.allocatable gives fewer GPUs than the node labels count on " + text;
  }

  static String awaitingPlan(GangKey gang, GangStatus.Complete complete) {
    return gang.quoted() + ": all " + complete.expected() + " members exist and fit; waiting for the placement leader's plan";
  }

  static String plannedElsewhere(GangKey gang, MemberPlan plan) {
    return gang.quoted() + ": this member is planned on " + plan.place();
  }

  static String plannedNodeRefused(GangKey gang, MemberPlan plan, Duration timeout) {
    return gang.quoted() + ": this member is planned on " + plan.place() + ", which kube-scheduler's own filters refused"
        + " (resources, ports, affinity); the plan is remade if the gang is not bound within " + timeout.toSeconds() + "s of it";
  }

  /** {@code planned on node-a GPUs 0,1 and node-b GPUs 4,5} (each place once, in plan order). */
  static String planned(GangKey gang, List<MemberPlace> places) {
    var parts = new ArrayList<String>();
    for (var place : places) {
      parts.add(place.node() + " GPU" + (place.gpus().size() == 1 ? " " : "s ")
          + String.join(",", place.gpus().stream().map(String::valueOf).toList()));
    }
    var text = parts.size() == 1 ? parts.get(0) : String.join(", ", parts.subList(0, parts.size() - 1)) + " and " + parts.get(parts.size() - 1);
    var message = gang.quoted() + " planned on " + text;
    return message.length() <= 1000 ? message : message.substring(0, 997) + "...";
  }
}
