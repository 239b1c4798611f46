package io.gpuadmission.gang;

import io.gpuadmission.contract.GpuAnnotations;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.MemberPlan;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/** Why a plan that was sound when made cannot hold any more, so that it is remade at once rather than at its timeout. */
final class PlanHealth {
  private PlanHealth() {}

  /** The reason, or empty while every member's planned node and GPUs can still take it. */
  static Optional<String> whyNot(List<GangMember> unbound, Function<GangMember, Optional<MemberPlan>> planOf, GpuLedger ledger, GangPlanning planning) {
    var nodes = planning.nodesByName();
    for (var member : unbound) {
      var plan = planOf.apply(member);
      if (plan.isEmpty()) {
        continue;
      }
      var sick = plan.get().gpus().stream().filter(ledger.unhealthy(plan.get().node())::contains).toList();
      if (!sick.isEmpty()) {
        return Optional.of("GPU" + (sick.size() == 1 ? " " : "s ") + GpuAnnotations.join(sick) + " of " + plan.get().node() + " became unhealthy");
      }
      if (!planning.admits(member, nodes.get(plan.get().node()))) {
        return Optional.of("node " + plan.get().node() + " can no longer take " + member.name() + " (deleted, cordoned, tainted or relabelled)");
      }
    }
    return Optional.empty();
  }
}
