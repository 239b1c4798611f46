package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.RequestConfigBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * Starting and stopping informers the same way everywhere: never block start-up on the API server.
 * Remembers the running ones so that {@link ClusterContact} can tell whether they are connected.
 */
final class Informers {
  private static final Logger LOG = Logger.getLogger(Informers.class);
  /** The running informers, each with what it watches and its last failure (empty once it has listed). */
  private static final Map<SharedIndexInformer<?>, Started> RUNNING = java.util.Collections.synchronizedMap(new java.util.LinkedHashMap<>());

  private static final class Started {
    final String what;
    volatile String lastFailure = "";

    Started(String what) {
      this.what = what;
    }
  }

  /**
   * How long one LIST request (a page of the first list or of a relist) may take: kube-apiserver's
   * own limit on requests that are not watches ({@code --request-timeout}, one minute by default).
   * client-go's reflector sets none of its own and relies on it; fabric8's default of 10 s, right
   * for a patch or a bind, is too short for a 500-pod page of a loaded API server, and a page that
   * times out makes the informer list again from the first page, so a large cluster's first list
   * may never end.
   */
  static final int LIST_TIMEOUT_MS = 60_000;

  private Informers() {}

  /**
   * A client for LISTs of the whole cluster (informers, the placement leader's rebuild):
   * {@code client}'s connections and settings, with requests allowed
   * {@link #LIST_TIMEOUT_MS}. Never to be closed (it would close {@code client}'s connections).
   */
  static KubernetesClient listing(KubernetesClient client) {
    var requests = client.getConfiguration().getRequestConfig();
    if (requests.getRequestTimeout() <= 0 || requests.getRequestTimeout() >= LIST_TIMEOUT_MS) {
      return client; // no timeout, or a longer one already
    }
    return client.newClient(new RequestConfigBuilder(requests).withRequestTimeout(LIST_TIMEOUT_MS).build()).adapt(KubernetesClient.class);
  }

  /**
   * Starts without waiting, and keeps retrying (fabric8's reconnect, with exponential backoff)
   * whatever fails: by default fabric8 stops an informer whose first list fails (an API server not
   * up yet, RBAC not yet in force) and one whose watch fails with anything but 410 Gone, and it
   * would never list again. Each failure is one WARN line, at most one a minute per informer.
   */
  static <T> SharedIndexInformer<T> start(SharedIndexInformer<T> informer, String what) {
    return start(informer, what, failure -> {});
  }

  /** As {@link #start(SharedIndexInformer, String)}, telling {@code failures} of each failure too. */
  static <T> SharedIndexInformer<T> start(SharedIndexInformer<T> informer, String what, Consumer<Throwable> failures) {
    var record = new Started(what);
    RUNNING.put(informer, record);
    var lastWarned = new java.util.concurrent.atomic.AtomicLong(Long.MIN_VALUE);
    informer.exceptionHandler((started, failure) -> {
      record.lastFailure = firstLine(failure);
      failures.accept(failure);
      var now = System.nanoTime();
      var last = lastWarned.get();
      if ((last == Long.MIN_VALUE || now - last > 60_000_000_000L) && lastWarned.compareAndSet(last, now)) {
        LOG.warnf("%s informer: %s; retrying with backoff", what, firstLine(failure));
      }
      return true;
    });
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

  private static String firstLine(Throwable failure) {
    var cause = failure.getCause() != null && failure.getMessage() != null && failure.getMessage().contains("Exception") ? failure.getCause() : failure;
    var message = String.valueOf(cause.getMessage());
    return cause.getClass().getSimpleName() + ": " + message.lines().findFirst().orElse("");
  }

  static void stop(SharedIndexInformer<?> informer) {
    if (informer != null) {
      RUNNING.remove(informer);
      informer.close();
    }
  }

  /**
   * A handler that treats an add and an update alike: the object as it is now, or gone. For
   * consumers that know objects by name (nodes, ConfigMaps, budgets, the tree): an object deleted
   * and created again under its name is, to them, the same object changed.
   */
  static <T extends HasMetadata> ResourceEventHandler<T> handler(Consumer<T> current, Consumer<T> gone) {
    return handler(current, gone, false);
  }

  /**
   * As {@link #handler}, for consumers that know objects by UID (the GPU ledger's pods): an update
   * whose object has another UID than before is the old object gone, then a new one. fabric8's
   * store is keyed by namespace and name, so a pod deleted and created again under its name while
   * the watch was down reaches the handlers, on the relist, as an update from the old pod to the
   * new one, and the old one's delete never comes.
   */
  static <T extends HasMetadata> ResourceEventHandler<T> handlerByUid(Consumer<T> current, Consumer<T> gone) {
    return handler(current, gone, true);
  }

  private static <T extends HasMetadata> ResourceEventHandler<T> handler(Consumer<T> current, Consumer<T> gone, boolean byUid) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        current.accept(obj);
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        if (byUid && !Objects.equals(uid(oldObj), uid(newObj))) {
          gone.accept(oldObj);
        }
        current.accept(newObj);
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        gone.accept(obj);
      }
    };
  }

  private static String uid(HasMetadata obj) {
    return obj == null || obj.getMetadata() == null ? null : obj.getMetadata().getUid();
  }

  /** The informers started and not stopped. */
  static List<SharedIndexInformer<?>> running() {
    synchronized (RUNNING) {
      return List.copyOf(RUNNING.keySet());
    }
  }

  /** What {@code informer} watches, as given to {@link #start}; "informer" for one not started here. */
  static String what(SharedIndexInformer<?> informer) {
    var started = RUNNING.get(informer);
    return started == null ? "informer" : started.what;
  }

  /** The last failure of {@code informer}'s list or watch, one line; empty if none was seen. */
  static String lastFailure(SharedIndexInformer<?> informer) {
    var started = RUNNING.get(informer);
    return started == null ? "" : started.lastFailure;
  }
}
