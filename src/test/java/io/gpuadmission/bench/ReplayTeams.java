package io.gpuadmission.bench;

import io.gpuadmission.allocator.Task;
import io.gpuadmission.quota.QuotaNodeSpec;
import io.gpuadmission.quota.QuotaResources;
import io.gpuadmission.quota.QuotaTree;
import io.gpuadmission.quota.QuotaTreeCheck;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;

/**
 * The three teams of the quota replay and their tree. A trace pod belongs to a team by a hash of
 * its name (60 % of the pods to team-a, 30 % to team-b, 10 % to team-c: unequal demand), each team
 * in its own namespace; the tree guarantees team-a and team-b 40 % of the cluster's GPUs each and
 * team-c 20 %, and caps them at 70 %, 60 % and 40 %. Quota counts {@code aliyun.com/gpu-mem} in
 * the unit the trace simulator's nodes advertise (1000 per GPU): a share its part, a whole GPU all
 * of its memory. One resource for both kinds, because both draw on the same GPUs here: with whole
 * GPUs as {@code nvidia.com/gpu} beside, each team could hold its min twice over (ACK clusters keep
 * share nodes and whole-GPU nodes apart, where two resources are two pools).
 */
final class ReplayTeams {
  static final String GPU_MEM = "aliyun.com/gpu-mem";

  /** A team: its name (its namespace too), share of the pods, min and max in percent of the cluster. */
  record Team(String name, int podPercent, int minPercent, int maxPercent) {}

  static final List<Team> TEAMS = List.of(new Team("team-a", 60, 40, 70), new Team("team-b", 30, 40, 60), new Team("team-c", 10, 20, 40));

  private ReplayTeams() {}

  /** The team of the trace pod {@code name}. */
  static String teamOf(String name) {
    var crc = new CRC32();
    crc.update(name.getBytes(StandardCharsets.UTF_8));
    var bucket = crc.getValue() % 100;
    var upTo = 0;
    for (var team : TEAMS) {
      upTo += team.podPercent();
      if (bucket < upTo) {
        return team.name();
      }
    }
    throw new IllegalStateException("pod percents sum to " + upTo);
  }

  /** What a task counts against its quota. */
  static QuotaResources ask(Task task) {
    return QuotaResources.of(GPU_MEM, task.gpus() * task.takes(TraceSimulator.GPU));
  }

  /**
   * The tree for {@code gpus} GPUs; {@code fixed}: every team's max at its min, a ResourceQuota
   * that cannot borrow.
   */
  static QuotaTree tree(long gpus, boolean fixed) {
    var leaves = new ArrayList<QuotaNodeSpec>();
    for (var team : TEAMS) {
      var min = percent(gpus, team.minPercent());
      var max = fixed ? min : percent(gpus, team.maxPercent());
      leaves.add(QuotaNodeSpec.leaf(team.name(), min, max, List.of(team.name())));
    }
    var all = QuotaResources.of(GPU_MEM, gpus * TraceSimulator.GPU);
    return switch (QuotaTree.check(QuotaNodeSpec.parent("cluster", all, all, leaves))) {
      case QuotaTreeCheck.Valid valid -> valid.tree();
      case QuotaTreeCheck.Invalid invalid -> throw new IllegalStateException(invalid.violations().toString());
    };
  }

  private static QuotaResources percent(long gpus, int percent) {
    return QuotaResources.of(GPU_MEM, gpus * TraceSimulator.GPU * percent / 100);
  }
}
