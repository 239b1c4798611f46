package io.gpuadmission.quota;

import java.util.Optional;

/** Whether a pod (or a gang, whole) may be placed as far as quotas go. */
public sealed interface QuotaDecision {
  /** Admitted; {@code quota} names its leaf, empty when no leaf names its namespace. */
  record Admitted(Optional<String> quota) implements QuotaDecision {}

  /**
   * Refused by {@code quota} (the first on the path, leaf first, whose limit it would pass);
   * {@code reason} as kube-scheduler should show it. {@code leafUnderMin}: the pod's leaf stays at
   * or under its min with it, so the limit passed is an ancestor's max that siblings' borrowing
   * fills, and reclaim ({@link ReclaimPlanner}) is how it gets room.
   */
  record Refused(String quota, String reason, boolean leafUnderMin) implements QuotaDecision {}
}
