package io.gpuadmission.cluster;

import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Starting and stopping informers the same way everywhere: never block start-up on the API server.
 * Remembers the running ones so that {@link ClusterContact} can tell whether they are connected.
 */
final class Informers {
  private static final Logger LOG = Logger.getLogger(Informers.class);
  private static final Set<SharedIndexInformer<?>> RUNNING = ConcurrentHashMap.newKeySet();

  private Informers() {}

  /** Starts without waiting; fabric8 keeps retrying the initial list in the background. */
  static <T> SharedIndexInformer<T> start(SharedIndexInformer<T> informer, String what) {
    RUNNING.add(informer);
    informer
        .start()
        .whenComplete(
            (ok, failure) -> {
              if (failure != null) {
                LOG.warnf("%s informer could not start, retrying in the background: %s", what, failure.getMessage());
              }
            });
    return informer;
  }

  static void stop(SharedIndexInformer<?> informer) {
    if (informer != null) {
      RUNNING.remove(informer);
      informer.close();
    }
  }

  /** The informers started and not stopped. */
  static List<SharedIndexInformer<?>> running() {
    return List.copyOf(RUNNING);
  }
}
