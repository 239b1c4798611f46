package io.gpuadmission.teamquota;

import io.gpuadmission.gang.GangKey;
import io.gpuadmission.gang.GangMember;
import io.gpuadmission.gang.GangPlanning;
import io.gpuadmission.gang.GangStatus;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.quota.QuotaDecision;
import java.util.Optional;

/**
 * A gang's team quota, asked before it is planned: its pending members' whole GPUs together (their
 * own planned GPUs not counted against them), so that the gang is admitted whole or waits whole.
 */
public final class GangQuotaCheck implements GangPlanning.GangQuota {
  private final QuotaGate gate;

  public GangQuotaCheck(QuotaGate gate) {
    this.gate = gate;
  }

  @Override
  public Optional<String> refusal(GangKey gang, GangStatus.Complete complete) {
    if (complete.unbound().isEmpty()) {
      return Optional.empty();
    }
    var uids = complete.unbound().stream().map(GangMember::uid).toList();
    return gate.gangRefusal(gang.namespace(), uids, GpuAsk.whole(complete.gpusEach()), complete.unbound().size())
        .map(QuotaDecision.Refused::reason);
  }
}
