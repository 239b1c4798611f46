package io.gpuadmission.policy;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/** The outcome of the last policy reload, for health and metrics. */
@ApplicationScoped
public class PolicyStatus {
  private final AtomicReference<String> lastError = new AtomicReference<>();
  private final AtomicLong failures = new AtomicLong();

  public void succeeded() {
    lastError.set(null);
  }

  public void failed(String reason) {
    lastError.set(reason);
    failures.incrementAndGet();
  }

  public Optional<String> lastError() {
    return Optional.ofNullable(lastError.get());
  }

  public long failures() {
    return failures.get();
  }
}
