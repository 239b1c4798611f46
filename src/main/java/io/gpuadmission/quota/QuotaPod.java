package io.gpuadmission.quota;

import java.util.Optional;

/**
 * A pod as quota sees it: what it asks (canonical units), its priority, when it started (bound or
 * assumed; millis of the caller's clock) and its gang, if any (members share the key).
 */
public record QuotaPod(
    String uid, String namespace, QuotaResources ask, int priority, long startedAtMillis, Optional<String> gangKey) {
  public QuotaPod {
    gangKey = gangKey == null ? Optional.empty() : gangKey;
    ask = ask == null ? QuotaResources.NONE : ask;
  }

  /** A pod of no gang. */
  public static QuotaPod of(String uid, String namespace, QuotaResources ask, int priority, long startedAtMillis) {
    return new QuotaPod(uid, namespace, ask, priority, startedAtMillis, Optional.empty());
  }
}
