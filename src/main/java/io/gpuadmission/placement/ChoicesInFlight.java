package io.gpuadmission.placement;

import io.gpuadmission.placement.PlacementDecider.Choice;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * kube-scheduler's assume step, on the GPUs: once it has the extender's answer it picks a node,
 * assumes the pod there in its own cache and binds asynchronously, while the next pod is already
 * being filtered. The extender's answer names that node (the one prioritize scored 10, or the only
 * one filter passed, when kube-scheduler skips prioritize), so the GPUs the pod will get there are
 * held in the ledger ({@link GpuClaim.Phase#CHOSEN}) until its bind takes them over, the pod is
 * filtered again (kube-scheduler forgot it), or {@code timeout} passes.
 */
public final class ChoicesInFlight {
  private final GpuLedger ledger;
  private final PlacementDecider decider;
  private final Clock clock;
  private final Duration timeout;

  public ChoicesInFlight(GpuLedger ledger, PlacementDecider decider, Clock clock, Duration timeout) {
    this.ledger = ledger;
    this.decider = decider;
    this.clock = clock;
    this.timeout = timeout;
  }

  /** A new scheduling cycle for the pod: what was chosen for it in the last one is dropped. */
  public void filtering(String uid) {
    if (!uid.isEmpty()) {
      ledger.unchoose(uid);
    }
  }

  /** kube-scheduler goes with {@code node} for the pod: hold the GPUs bind will give it there. */
  public void chosen(String uid, String pod, GpuAsk ask, NodeEligibility eligibility, String node, List<GpuAsk> held) {
    if (uid.isEmpty() || ask.kind() == GpuAsk.Kind.NONE) {
      return;
    }
    if (decider.choose(ask, eligibility, node, held) instanceof Choice.Chosen chosen) {
      var memory = ask.kind() == GpuAsk.Kind.SHARE ? ask.memory() : 0;
      var claim = new GpuClaim(uid, pod, node, chosen.gpus(), memory, GpuClaim.Phase.CHOSEN, clock.instant().plus(timeout), ask.cpuMilli());
      ledger.choose(claim, clock.instant().plus(timeout));
    }
  }
}
