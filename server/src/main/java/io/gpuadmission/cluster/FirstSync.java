package io.gpuadmission.cluster;

import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.gpuadmission.policy.PolicyStore;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Whether the service has seen the cluster once: every informer has listed its objects and the
 * policy ConfigMap has been read (or found absent). An informer on a resource the cluster may not
 * serve counts only once discovery says it is served ({@link OptionalResource}): a cluster without
 * a CRD is read all the same. Until then the caches are empty and the policy
 * in force is the built-in default, not the cluster's: answers made from them would be wrong, and
 * a pod is mutated only once, at CREATE. Once reached it stays reached: a later outage or relist
 * answers from the caches as they were ({@link ClusterContact} shows the staleness), since every
 * replica loses the API server at the same moment and taking them all out of the Service would
 * refuse every GPU pod. Without a cluster there is nothing to wait for.
 */
@ApplicationScoped
public class FirstSync {
  private static final Logger LOG = Logger.getLogger(FirstSync.class);

  private final ClusterConnection cluster;
  private final PolicyStore policies;
  private final Supplier<List<SharedIndexInformer<?>>> informers;
  private final Supplier<List<String>> undecided;
  private final LongSupplier nanoTime;
  private final long createdNanos;
  private volatile boolean done;

  @Inject
  public FirstSync(ClusterConnection cluster, PolicyStore policies) {
    this(cluster, policies, Informers::running, OptionalResource::undecided, System::nanoTime);
  }

  /**
   * For tests: the informers to look at (those of one hand-wired webhook), the optional resources
   * discovery has not answered for yet ({@link OptionalResource}), and a clock.
   */
  FirstSync(
      ClusterConnection cluster, PolicyStore policies, Supplier<List<SharedIndexInformer<?>>> informers, Supplier<List<String>> undecided,
      LongSupplier nanoTime) {
    this.cluster = cluster;
    this.policies = policies;
    this.informers = informers;
    this.undecided = undecided;
    this.nanoTime = nanoTime;
    this.createdNanos = nanoTime.getAsLong();
  }

  /** True once every informer has listed and the policy has been read; stays true. */
  public boolean done() {
    if (done) {
      return true;
    }
    if (!cluster.available()) {
      done = true;
      return true;
    }
    var running = informers.get();
    if (!running.isEmpty() && running.stream().allMatch(SharedIndexInformer::hasSynced) && policies.unread().isEmpty()
        && undecided.get().isEmpty()) {
      done = true;
      LOG.infof("cluster read: %d informers listed and the policy read %d ms after start", running.size(),
          (nanoTime.getAsLong() - createdNanos) / 1_000_000);
    }
    return done;
  }

  /** What is still awaited, for the readiness check and refusals; "" once done. */
  public String waitingFor() {
    if (done()) {
      return "";
    }
    var missing = new ArrayList<String>();
    String failure = "";
    for (var informer : informers.get()) {
      if (!informer.hasSynced()) {
        missing.add(Informers.what(informer));
        if (failure.isEmpty()) {
          failure = Informers.lastFailure(informer);
        }
      }
    }
    var parts = new ArrayList<String>();
    if (!missing.isEmpty()) {
      parts.add("first list of " + String.join(", ", missing.stream().distinct().toList()) + " not done"
          + (failure.isEmpty() ? "" : " (last attempt: " + failure + ")"));
    }
    parts.addAll(undecided.get());
    policies.unread().ifPresent(parts::add);
    return parts.isEmpty() ? "starting the informers" : String.join("; ", parts);
  }
}
