package io.gpuadmission.placement;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Room on a node that the service freed for a pending pod (quota reclaim evicted borrowers there),
 * held for it until {@code until}. Written on the pod as the condition {@link #CONDITION}, so that
 * every replica holds it and a new placement leader still does after a failover: a status change,
 * which kube-scheduler takes as no reason to try the pod again (an annotation would requeue it).
 * Its message names the node and the time; its {@code lastTransitionTime} is when it was written.
 */
public record HeldRoom(String node, Instant until) {
  /** The pod condition type; status True while written by the service. */
  public static final String CONDITION = "gpu-admission.io/ReclaimedRoom";

  static final String REASON = "QuotaReclaim";

  private static final Pattern MESSAGE = Pattern.compile("^quota reclaim holds the GPUs it freed on node (\\S+) for this pod until (\\S+)$");

  /** The room the pod's condition holds; empty when it has none or it is not the service's writing. */
  public static Optional<HeldRoom> of(Pod pod) {
    return condition(pod).flatMap(HeldRoom::parse);
  }

  /**
   * The room the pod's condition holds as a replica sees it at {@code now}: for as long from now as
   * it was written for (its time less its writing time), never longer than its own time, so a
   * writer whose clock runs ahead holds it no longer on this replica.
   */
  public static Optional<HeldRoom> asSeen(Pod pod, Instant now) {
    return condition(pod).flatMap(condition -> parse(condition).map(room -> {
      var written = written(condition);
      if (written.isEmpty() || !written.get().isBefore(room.until())) {
        return room;
      }
      var seen = now.plus(java.time.Duration.between(written.get(), room.until()));
      return seen.isBefore(room.until()) ? new HeldRoom(room.node(), seen) : room;
    }));
  }

  private static Optional<PodCondition> condition(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return pod.getStatus().getConditions().stream().filter(c -> c != null && CONDITION.equals(c.getType())).findFirst();
  }

  private static Optional<Instant> written(PodCondition condition) {
    try {
      return Optional.ofNullable(condition.getLastTransitionTime()).map(Instant::parse);
    } catch (DateTimeParseException unreadable) {
      return Optional.empty();
    }
  }

  private static Optional<HeldRoom> parse(PodCondition condition) {
    if (!"True".equals(condition.getStatus()) || condition.getMessage() == null) {
      return Optional.empty();
    }
    var parts = MESSAGE.matcher(condition.getMessage());
    if (!parts.matches()) {
      return Optional.empty();
    }
    try {
      return Optional.of(new HeldRoom(parts.group(1), Instant.parse(parts.group(2))));
    } catch (DateTimeParseException unreadable) {
      return Optional.empty();
    }
  }

  /** The condition that holds this room, written at {@code now}. */
  public PodCondition condition(Instant now) {
    return new PodConditionBuilder()
        .withType(CONDITION)
        .withStatus("True")
        .withReason(REASON)
        .withMessage("quota reclaim holds the GPUs it freed on node " + node + " for this pod until " + seconds(until))
        .withLastTransitionTime(seconds(now))
        .build();
  }

  /** Whether the room is still held at {@code now}. */
  public boolean heldAt(Instant now) {
    return now.isBefore(until);
  }

  private static String seconds(Instant at) {
    return DateTimeFormatter.ISO_INSTANT.format(at.truncatedTo(ChronoUnit.SECONDS));
  }
}
