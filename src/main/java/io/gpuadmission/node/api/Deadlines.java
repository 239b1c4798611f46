package io.gpuadmission.node.api;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one timer thread of the agent's API client: it ends a request whose answer has not come in
 * time and a watch the server should have ended, by closing its connection. Its tasks only close
 * sockets, so none can hold it up.
 */
final class Deadlines {
  private static final ScheduledThreadPoolExecutor TIMER = timer();

  private Deadlines() {}

  private static ScheduledThreadPoolExecutor timer() {
    var timer = new ScheduledThreadPoolExecutor(1, r -> {
      var thread = new Thread(r, "api-deadlines");
      thread.setDaemon(true);
      return thread;
    });
    // Most deadlines are cancelled (the answer came): drop them at once rather than at their time.
    timer.setRemoveOnCancelPolicy(true);
    return timer;
  }

  /** Runs {@code task} after {@code delay} unless cancelled first. */
  static ScheduledFuture<?> after(Duration delay, Runnable task) {
    return TIMER.schedule(task, Math.max(1, delay.toMillis()), TimeUnit.MILLISECONDS);
  }
}
