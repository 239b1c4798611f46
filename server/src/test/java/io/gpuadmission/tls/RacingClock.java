package io.gpuadmission.tls;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

/**
 * A fixed clock that runs {@code interleaved} the first time it is read: a replica racing this
 * one.
 */
final class RacingClock extends Clock {
  private final Instant now;
  private Runnable interleaved;

  RacingClock(Instant now, Runnable interleaved) {
    this.now = now;
    this.interleaved = interleaved;
  }

  @Override
  public Instant instant() {
    if (interleaved != null) {
      var run = interleaved;
      interleaved = null;
      run.run();
    }
    return now;
  }

  @Override
  public ZoneOffset getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(java.time.ZoneId zone) {
    return this;
  }
}
