package io.gpuadmission.cluster;

import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
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

  /** A handler that treats an add and an update alike: the object as it is now, or gone. */
  static <T> ResourceEventHandler<T> handler(Consumer<T> current, Consumer<T> gone) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        current.accept(obj);
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        current.accept(newObj);
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        gone.accept(obj);
      }
    };
  }

  /** The informers started and not stopped. */
  static List<SharedIndexInformer<?>> running() {
    return List.copyOf(RUNNING);
  }
}
