package io.gpuadmission.gang;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** Gangs as {@code /extender/inspect} shows them: members, where each is bound or planned, and why the rest wait. */
public final class GangInspection {
  private GangInspection() {}

  /** One gang; {@code reason} says why its pending members wait, "" when they are planned or all bound. */
  public record Gang(String namespace, String job, String state, String reason, List<Member> members) {}

  /** One member; {@code node} when bound, {@code planned} ({@code node-a GPUs 0,1}) when planned. */
  public record Member(String name, String node, String planned) {}

  public static List<Gang> of(GangRegistry registry, GangGate gate) {
    var out = new ArrayList<Gang>();
    for (var key : registry.gangs()) {
      var members = registry.members(key);
      if (members.isEmpty()) {
        continue;
      }
      members.sort(Comparator.comparing(GangMember::name));
      var shown = members.stream().map(m -> new Member(m.name(), m.node(), m.plan().map(p -> p.place()).orElse(""))).toList();
      var pending = members.stream().filter(m -> !m.bound()).toList();
      String state;
      String reason = "";
      if (pending.isEmpty()) {
        state = "bound";
      } else if (pending.stream().allMatch(m -> m.plan().isPresent())) {
        state = "planned";
      } else {
        state = "waiting";
        reason = gate.reason(pending.get(0));
      }
      out.add(new Gang(key.namespace(), key.job(), state, reason, shown));
    }
    return out;
  }
}
