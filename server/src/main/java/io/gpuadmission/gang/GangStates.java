package io.gpuadmission.gang;

import io.gpuadmission.gang.GangMetrics.State;
import java.util.Optional;
import java.util.function.Supplier;

/** Where an unplaced gang stands, the same for the metrics of every replica and for inspect. */
final class GangStates {
  private GangStates() {}

  /** Empty once every member is bound; {@code fit} plans a complete gang only when its state needs it. */
  static Optional<State> of(GangStatus status, Supplier<GangPlanning.Outcome> fit) {
    if (status instanceof GangStatus.Waiting) {
      return Optional.of(State.WAITING);
    }
    if (status instanceof GangStatus.Disagreeing) {
      return Optional.of(State.DISAGREEING);
    }
    var complete = (GangStatus.Complete) status;
    if (complete.unbound().isEmpty()) {
      return Optional.empty();
    }
    if (complete.unbound().stream().allMatch(m -> m.plan().isPresent())) {
      return Optional.of(State.PLANNED);
    }
    return Optional.of(fit.get() instanceof GangPlanning.Outcome.NoRoom ? State.NO_ROOM : State.AWAITING_PLAN);
  }
}
