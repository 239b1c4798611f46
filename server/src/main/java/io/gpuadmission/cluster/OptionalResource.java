package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * An informer on a resource that a cluster may not serve (a CRD that is not installed), running
 * only while discovery lists the resource. A LIST of a resource nobody serves is a 404 that never
 * ends by itself, and an informer on it never lists: readiness ({@link FirstSync}) must not wait
 * for one. It waits only for discovery's first answer here, and then, if the resource is served,
 * for the informer's first list as for any other. Discovery is asked again every {@code recheck}
 * (one small GET): the informer starts as soon as the resource appears, and stops when it goes (its
 * CRD deleted; the informer's own list answering 404 says so sooner), telling {@code gone} why.
 * Neither needs a restart.
 */
public final class OptionalResource implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(OptionalResource.class);
  /** The optional resources whose discovery has not answered yet: readiness waits for these. */
  private static final Set<OptionalResource> UNDECIDED = ConcurrentHashMap.newKeySet();

  private final KubernetesClient client;
  private final ResourceDefinitionContext resource;
  private final String namespace;
  private final String what;
  private final Duration recheck;
  private final Consumer<SharedIndexInformer<GenericKubernetesResource>> served;
  private final Consumer<String> gone;
  private final ScheduledExecutorService timer;
  private volatile SharedIndexInformer<GenericKubernetesResource> informer;
  private volatile String notServed = "";
  private volatile String lastFailure = "";

  /**
   * {@code served} gets each new informer before it starts (to add its handlers); {@code gone} is
   * told why the resource is not served, at the first discovery answer that says so and each time
   * the resource goes away. {@code what} names the resource in logs and health ({@code
   * ElasticQuotaTree}).
   */
  public OptionalResource(
      KubernetesClient client, ResourceDefinitionContext resource, String namespace, String what, Duration recheck,
      Consumer<SharedIndexInformer<GenericKubernetesResource>> served, Consumer<String> gone) {
    this.client = Informers.listing(client);
    this.resource = resource;
    this.namespace = namespace;
    this.what = what;
    this.recheck = recheck;
    this.served = served;
    this.gone = gone;
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      var thread = new Thread(r, "optional-api " + what);
      thread.setDaemon(true);
      return thread;
    });
  }

  /** Asks discovery now, without waiting for the answer. */
  public OptionalResource start() {
    UNDECIDED.add(this);
    after(Duration.ZERO);
    return this;
  }

  /** The informer while the resource is served, null otherwise. */
  public SharedIndexInformer<GenericKubernetesResource> informer() {
    return informer;
  }

  /** Why the resource is not served (for health and inspection); empty while it is, or before discovery answered. */
  public String notServed() {
    return notServed;
  }

  /** {@code elasticquotatrees.scheduling.sigs.k8s.io}: the CRD that serves the resource. */
  public String crdName() {
    return resource.getPlural() + "." + resource.getGroup();
  }

  /** What readiness still waits for among the optional resources: those discovery has not answered for. */
  static List<String> undecided() {
    return UNDECIDED.stream().map(r -> "discovery of " + r.apiVersion() + " for " + r.what
        + (r.lastFailure.isEmpty() ? "" : " (last attempt: " + r.lastFailure + ")")).sorted().toList();
  }

  private String apiVersion() {
    return resource.getGroup() + "/" + resource.getVersion();
  }

  private void check() {
    boolean listed;
    try {
      listed = client.supports(apiVersion(), resource.getKind());
    } catch (RuntimeException e) {
      // Not an answer (the API server unreachable, or refusing us): every informer waits then.
      lastFailure = e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).lines().findFirst().orElse("");
      after(recheck);
      return;
    }
    lastFailure = "";
    if (listed) {
      if (informer == null) {
        serve();
      }
    } else {
      stopInformer();
      var reason = "the cluster does not serve " + what + " (" + apiVersion() + ", resource " + resource.getPlural() + "): no CRD " + crdName()
          + "; checked again every " + (recheck.toMillis() % 1000 == 0 ? recheck.toSeconds() + " s" : recheck.toMillis() + " ms")
          + ", and used without a restart once it is installed";
      if (!reason.equals(notServed)) {
        LOG.infof("%s", reason);
        notServed = reason;
        gone.accept(reason);
      }
    }
    UNDECIDED.remove(this);
    after(recheck);
  }

  private void serve() {
    var created = client.genericKubernetesResources(resource).inNamespace(namespace).runnableInformer(0);
    served.accept(created); // the consumer's handlers, before the first list
    informer = created;
    if (!notServed.isEmpty()) {
      LOG.infof("the cluster serves %s (%s) now: watching it", what, apiVersion());
    }
    notServed = "";
    Informers.start(created, what, failure -> {
      if (notFound(failure)) {
        execute(() -> lost(created));
      }
    });
  }

  /** A 404 anywhere in {@code failure}'s causes (the informer may wrap the client's exception). */
  static boolean notFound(Throwable failure) {
    for (var cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
      if (cause instanceof KubernetesClientException e && e.getCode() == 404) {
        return true;
      }
    }
    return false;
  }

  /** The informer's list or watch answered 404: the resource went (its CRD deleted); discovery says so at once. */
  private void lost(SharedIndexInformer<GenericKubernetesResource> which) {
    if (informer == which) {
      stopInformer();
    }
  }

  private void stopInformer() {
    var running = informer;
    if (running != null) {
      informer = null;
      Informers.stop(running);
      LOG.infof("%s (%s) is not served any more: stopped watching it", what, apiVersion());
    }
  }

  private void after(Duration delay) {
    try {
      timer.schedule(this::check, delay.toMillis(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closed) {
      // closed
    }
  }

  private void execute(Runnable task) {
    try {
      timer.execute(task);
    } catch (RejectedExecutionException closed) {
      // closed
    }
  }

  @Override
  public void close() {
    UNDECIDED.remove(this);
    timer.shutdownNow();
    Informers.stop(informer);
    informer = null;
  }
}
