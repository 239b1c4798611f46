package io.gpuadmission.cluster;

import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import org.jboss.logging.Logger;

/** Starting and stopping informers the same way everywhere: never block start-up on the API server. */
final class Informers {
  private static final Logger LOG = Logger.getLogger(Informers.class);

  private Informers() {}

  /** Starts without waiting; fabric8 keeps retrying the initial list in the background. */
  static <T> SharedIndexInformer<T> start(SharedIndexInformer<T> informer, String what) {
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
      informer.close();
    }
  }
}
