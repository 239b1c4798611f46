package io.gpuadmission.extender;

import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads binds run on. A bind waits on the API server (read the pod, patch it, create the
 * Binding); kept apart from Quarkus' worker pool, hung binds queue here while readiness probes and
 * admission reviews are still answered.
 */
@ApplicationScoped
public class BindThreads {
  /** kube-scheduler binds a few pods at once; more waiting on the API server would not go faster. */
  private static final int THREADS = 4;

  private final AtomicInteger count = new AtomicInteger();
  private final ExecutorService executor =
      Executors.newFixedThreadPool(
          THREADS,
          r -> {
            var thread = new Thread(r, "extender-bind-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
          });

  ExecutorService executor() {
    return executor;
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    executor.shutdownNow();
  }
}
