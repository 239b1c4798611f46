package io.gpuadmission.node.deadline;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The node agent's one timer thread for the deadlines of its API client (an answer's body, a watch
 * the server should have ended; grpc-java keeps the kubelet calls' own). Its tasks only close
 * connections, never write to a socket or wait, so that no peer can stall the others' deadlines.
 */
public final class DeadlineTimer {
  private static final ScheduledThreadPoolExecutor TIMER = timer();

  private DeadlineTimer() {}

  private static ScheduledThreadPoolExecutor timer() {
    var executor = new ScheduledThreadPoolExecutor(1, r -> {
      var thread = new Thread(r, "node-agent-deadlines");
      thread.setDaemon(true);
      return thread;
    });
    // Most deadlines are cancelled in time (a call answered, a connection closed): out of the queue at once.
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }

  /** Runs {@code task} after {@code delay} unless cancelled first. */
  public static ScheduledFuture<?> after(Duration delay, Runnable task) {
    return TIMER.schedule(task, Math.max(1, delay.toNanos()), TimeUnit.NANOSECONDS);
  }
}
