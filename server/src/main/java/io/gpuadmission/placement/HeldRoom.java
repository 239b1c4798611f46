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
 * {@code kubectl describe pod} shows it with the node and the time.
 */
public record HeldRoom(String node, Instant until) {
  /** The pod condition type; status True while written by the service. */
  public static final String CONDITION = "gpu-admission.io/ReclaimedRoom";

  static final String REASON = "QuotaReclaim";

  private static final Pattern MESSAGE = Pattern.compile("^quota reclaim holds the GPUs it freed on node (\\S+) for this pod until (\\S+)$");

  /** The room the pod's condition holds; empty when it has none or it is not the service's writing. */
  public static Optional<HeldRoom> of(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    for (var condition : pod.getStatus().getConditions()) {
      if (condition != null && CONDITION.equals(condition.getType())) {
        return parse(condition);
      }
    }
    return Optional.empty();
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
