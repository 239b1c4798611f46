package io.gpuadmission.node.grpc;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one thread that runs every deadline of the agent's gRPC: a client call's, and each server
 * connection's preface, idle and drain limits. Its tasks only close connections or queue work
 * elsewhere, never write to a socket, so that a peer that stops reading cannot stall it.
 */
final class GrpcTimer {
  private static final ScheduledThreadPoolExecutor TIMER = timer();

  private GrpcTimer() {}

  private static ScheduledThreadPoolExecutor timer() {
    var executor = new ScheduledThreadPoolExecutor(1, r -> {
      var thread = new Thread(r, "grpc-deadlines");
      thread.setDaemon(true);
      return thread;
    });
    // A deadline cancelled in time (a call answered, a connection closed) leaves the queue at once.
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }

  static ScheduledFuture<?> after(Duration delay, Runnable task) {
    return TIMER.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
  }
}
