package io.gpuadmission.cluster;

import io.gpuadmission.mode.ServerStartup;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import jakarta.inject.Inject;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Whether the informers are watching the API server, and for how long they have not been. While
 * they are not, requests are answered from the caches as they were (nothing in the request path
 * calls the API server); this only makes the staleness visible, in health data and metrics, and
 * in one log line when contact is lost and one when it returns.
 *
 * <p>An informer renews its watch routinely, and is not watching meanwhile: fabric8 ends each watch
 * after 5 to 10 minutes and opens the next one after its reconnect interval (a second by default),
 * or the API server ends it; the next one may be answered 410 Gone and retried. With a handful of
 * informers that is a renewal every minute or two, on a healthy API server. So contact counts as lost only once an
 * informer has not been watching for {@link #RENEWAL_GRACE} without a break: a renewal takes a
 * second or two, while against an API server that does not answer (or refuses) every retry fails
 * and the informer stays without a watch.
 */
@ApplicationScoped
public class ClusterContact {
  private static final Logger LOG = Logger.getLogger(ClusterContact.class);
  static final Duration CHECK_EVERY = Duration.ofSeconds(1);
  /** For how long an informer may be without a watch before contact counts as lost. */
  public static final Duration RENEWAL_GRACE = Duration.ofSeconds(10);

  private final ClusterConnection cluster;
  private final LongSupplier nanoTime;
  private final Supplier<List<SharedIndexInformer<?>>> informers;
  private volatile long lastContactNanos;
  private volatile boolean connected;
  private volatile boolean everConnected;
  private volatile ScheduledExecutorService checker;

  @Inject
  public ClusterContact(ClusterConnection cluster) {
    this(cluster, System::nanoTime, Informers::running);
  }

  /** For tests: a clock, and the informers to look at. */
  ClusterContact(ClusterConnection cluster, LongSupplier nanoTime, Supplier<List<SharedIndexInformer<?>>> informers) {
    this.cluster = cluster;
    this.nanoTime = nanoTime;
    this.informers = informers;
    this.lastContactNanos = nanoTime.getAsLong();
  }

  void start(@Observes ServerStartup event) {
    if (!cluster.available()) {
      return;
    }
    checker =
        Executors.newSingleThreadScheduledExecutor(
            task -> {
              var thread = new Thread(task, "cluster-contact");
              thread.setDaemon(true);
              return thread;
            });
    checker.scheduleWithFixedDelay(this::check, 0, CHECK_EVERY.toMillis(), TimeUnit.MILLISECONDS);
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    if (checker != null) {
      checker.shutdownNow();
    }
  }

  /**
   * Looks at every running informer once; runs every {@link #CHECK_EVERY}. Connected once all watch
   * (the first time: once they have listed and watch); lost once one has been without a watch for
   * {@link #RENEWAL_GRACE} since all last watched.
   */
  void check() {
    var running = informers.get();
    var watching = !running.isEmpty() && running.stream().allMatch(SharedIndexInformer::isWatching);
    var now = nanoTime.getAsLong();
    if (watching) {
      if (!connected && everConnected) {
        LOG.infof("informers are watching the API server again after %d s", (now - lastContactNanos) / 1_000_000_000L);
      }
      everConnected = true;
      connected = true;
      lastContactNanos = now;
    } else if (connected && now - lastContactNanos >= RENEWAL_GRACE.toNanos()) {
      LOG.warnf(
          "informers lost the API server (not watching for %d s): answering from the last known nodes, pods and policy until they reconnect",
          (now - lastContactNanos) / 1_000_000_000L);
      connected = false;
    }
  }

  /**
   * True when there is a cluster and every informer is watching it, or was less than {@link
   * #RENEWAL_GRACE} ago (renewing its watch).
   */
  public boolean connected() {
    return connected;
  }

  /** Whether there is a cluster to watch at all. */
  public boolean clusterConfigured() {
    return cluster.available();
  }

  /**
   * Seconds since every informer was last seen watching (since start-up if never); 0 while
   * connected, renewals included.
   */
  public long secondsSinceContact() {
    if (!cluster.available() || connected) {
      return 0;
    }
    return (nanoTime.getAsLong() - lastContactNanos) / 1_000_000_000L;
  }
}
