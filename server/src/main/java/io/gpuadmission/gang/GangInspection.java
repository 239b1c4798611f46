package io.gpuadmission.gang;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Gangs as {@code /extender/inspect} shows them: members, where each is bound or planned, the
 * gang's state (as the {@code gpu_admission_gangs} metric counts it) and why its pending members wait.
 */
public final class GangInspection {
  private GangInspection() {}

  /**
   * One gang; {@code state}: waiting, disagreeing, no_room, awaiting_plan, planned or bound;
   * {@code reason}: what its pending members are told, "" when they are planned or all bound.
   */
  public record Gang(String namespace, String job, String state, String reason, List<Member> members) {}

  /** One member; {@code node} when bound, {@code planned} ({@code node-a GPUs 0,1}) when planned. */
  public record Member(String name, String node, String planned) {}

  public static List<Gang> of(GangRegistry registry, GangGate gate, GangPlanning planning) {
    var out = new ArrayList<Gang>();
    for (var key : registry.gangs()) {
      var members = registry.members(key);
      if (members.isEmpty()) {
        continue;
      }
      members.sort(Comparator.comparing(GangMember::name));
      var shown = members.stream().map(m -> new Member(m.name(), m.node(), m.plan().map(p -> p.place()).orElse(""))).toList();
      var status = registry.status(key, Optional.empty());
      var state = GangStates.of(status, () -> planning.plan(key, (GangStatus.Complete) status));
      var pending = members.stream().filter(m -> !m.bound() && m.plan().isEmpty()).findFirst();
      var reason = state.isPresent() && state.get() != GangMetrics.State.PLANNED ? pending.or(() -> members.stream().findFirst()).map(gate::reason).orElse("") : "";
      out.add(new Gang(key.namespace(), key.job(), state.map(s -> s.label()).orElse("bound"), reason, shown));
    }
    return out;
  }
}
