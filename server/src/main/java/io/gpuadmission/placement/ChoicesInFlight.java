package io.gpuadmission.placement;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;

/**
 * Holds the node kube-scheduler is about to bind a pod to, as kube-scheduler's cache assumes the
 * pod: its binding cycle (permit, pre-bind, then our bind) runs apart from its scheduling cycle, so
 * the next pod's filter can come before this pod's bind and would otherwise see GPUs that are
 * already promised. The node is the one prioritize gives its top score (with the shipped weight
 * kube-scheduler's pick), or the only node filter passed (kube-scheduler then calls no prioritize).
 *
 * <p>A choice never outlives its reason: the pod's bind drops it (bind chooses again on the node it
 * names), so does the pod's next filter (a new scheduling cycle), the informer showing the pod
 * deleted or bound, this replica losing the lead, and at the latest {@code holdFor} after it was
 * made. Only the leader holds choices (it alone binds, and kube-scheduler calls only it), and only
 * for pods its pod informer shows.
 */
public final class ChoicesInFlight {
  private final GpuLedger ledger;
  private final PlacementDecider decider;
  private final LeaderGate gate;
  private final Nominations nominations;
  private final Clock clock;
  private final Duration holdFor;
  private final Predicate<String> known;

  /** {@code known}: whether the pod informer shows a pod of this UID (only such pods are ever bound). */
  public ChoicesInFlight(
      GpuLedger ledger,
      PlacementDecider decider,
      LeaderGate gate,
      Nominations nominations,
      Clock clock,
      Duration holdFor,
      Predicate<String> known) {
    this.known = known;
    this.ledger = ledger;
    this.decider = decider;
    this.gate = gate;
    this.nominations = nominations;
    this.clock = clock;
    this.holdFor = holdFor;
  }

  /** The pod the extender is asked about, as filter and prioritize know it. */
  public record Asked(String uid, String pod, GpuAsk ask, NodeEligibility eligibility, int priority) {}

  /** A new scheduling cycle for the pod: what its last cycle chose counts no more. */
  public void scheduling(String uid) {
    if (!uid.isEmpty()) {
      ledger.release(uid);
    }
  }

  /** Filter passed these nodes: with only one, kube-scheduler binds there without prioritize. */
  public void filtered(Asked asked, List<String> passed) {
    if (passed.size() == 1) {
      hold(asked, passed.get(0));
    }
  }

  /** Prioritize scored the nodes: the one with the top score is where kube-scheduler binds. */
  public void prioritized(Asked asked, List<PlacementDecider.NodeScore> scores) {
    for (var score : scores) {
      if (score.score() == PlacementDecider.MAX_SCORE) {
        hold(asked, score.node());
        return;
      }
    }
  }

  private void hold(Asked asked, String node) {
    // A pod the informer does not show (warm-up's samples, a request made by hand, no cluster at
    // all) has no bind coming that a hold could serve.
    if (asked.uid().isEmpty() || asked.ask().kind() == GpuAsk.Kind.NONE || !gate.leading() || !known.test(asked.uid())) {
      return;
    }
    var held = nominations.heldOn(node, asked.priority(), asked.uid());
    if (decider.choose(asked.ask(), asked.eligibility(), node, held) instanceof PlacementDecider.Choice.Chosen chosen) {
      var memory = asked.ask().kind() == GpuAsk.Kind.SHARE ? asked.ask().memory() : 0;
      var claim = GpuClaim.chosen(asked.uid(), asked.pod(), node, chosen.gpus(), memory, asked.ask().cpuMilli(), clock.instant().plus(holdFor));
      ledger.hold(claim, claim.expires());
    }
  }
}
