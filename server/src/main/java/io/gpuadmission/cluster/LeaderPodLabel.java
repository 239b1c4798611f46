package io.gpuadmission.cluster;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.gpuadmission.placement.LeaderGate;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jboss.logging.Logger;

/**
 * Keeps label {@value #LABEL}{@code : "true"} on the pod of the replica that holds the placement
 * Lease and on no other pod, so that the Service kube-scheduler calls (it selects that label) sends
 * every bind to the leader on its first attempt.
 *
 * <p>Why a leader-only Service and not forwarding binds from a follower to the leader: forwarding
 * needs a replica-to-replica HTTPS client whose peer is a pod IP the serving certificate does not
 * name, a leader address that can be stale exactly during a hand-over, and a hop that doubles a
 * bind's latency and failure modes. A label on the leader's pod is what Patroni's leader endpoint
 * and the leader-labeler sidecars do: kube-proxy routes, nothing new listens, and a stale label
 * costs no more than today's fallback (a follower that still gets a bind answers "not the leader"
 * and closes the connection, and kube-scheduler retries). The price: filter and prioritize also go
 * to the leader, which answers them from the same caches as any replica.
 *
 * <p>Patches run on one thread of their own, in order, each applying the gate's state at the time
 * it runs, so the label converges whatever the order of leadership events; a failed patch is
 * retried. A new leader also takes the label off any other pod (a leader that lost its Lease
 * without reaching the API server). Without a pod of its own (run outside the cluster) it does
 * nothing.
 */
public final class LeaderPodLabel implements AutoCloseable {
  /** The label the leader-only Service selects. */
  public static final String LABEL = "gpu-admission.io/placement-leader";

  private static final Logger LOG = Logger.getLogger(LeaderPodLabel.class);

  private final KubernetesClient client;
  private final String namespace;
  private final LeaderGate gate;
  private final Duration retry;
  private final ScheduledThreadPoolExecutor worker = new ScheduledThreadPoolExecutor(1, LeaderPodLabel::thread);
  private final AtomicBoolean retryPending = new AtomicBoolean();
  private int failures;
  private volatile boolean ownPodMissing;

  public LeaderPodLabel(KubernetesClient client, String namespace, LeaderGate gate, Duration retry) {
    this.client = client;
    this.namespace = namespace;
    this.gate = gate;
    this.retry = retry;
    // At shutdown the queued step-down still runs; retries waiting for an API server do not.
    worker.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
  }

  /** Follows the gate from now on, and clears a label left from before a restart. */
  public LeaderPodLabel start() {
    gate.onChange(this::sync);
    sync();
    return this;
  }

  /** Brings the label in line with the gate, on the label's own thread. */
  public void sync() {
    try {
      worker.execute(this::apply);
    } catch (RejectedExecutionException closed) {
      // Shutting down: the last sync already queued takes the label off.
    }
  }

  private void apply() {
    if (ownPodMissing) {
      return;
    }
    var leading = gate.leading();
    try {
      label(gate.identity(), leading);
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        ownPodMissing = true;
        LOG.infof("no pod %s/%s: not labelling the placement leader (not running in a pod)", namespace, gate.identity());
      } else {
        retryLater(leading, e);
      }
      return;
    }
    if (leading) {
      unlabelOthers(leading);
    } else {
      failures = 0;
    }
  }

  private void unlabelOthers(boolean leading) {
    try {
      for (var other : client.pods().inNamespace(namespace).withLabel(LABEL).list().getItems()) {
        var name = other.getMetadata().getName();
        if (!name.equals(gate.identity())) {
          try {
            label(name, false);
            LOG.infof("took label %s off pod %s, which no longer leads", LABEL, name);
          } catch (KubernetesClientException e) {
            if (e.getCode() != 404) { // a pod deleted since the list needs nothing
              throw e;
            }
          }
        }
      }
      failures = 0;
    } catch (KubernetesClientException e) {
      retryLater(leading, e);
    }
  }

  /** One retry at a time, whatever number of leadership changes failed meanwhile. */
  private void retryLater(boolean leading, KubernetesClientException e) {
    // Said once per outage, then every minute or so: the API server may be away for long.
    if (failures++ % 30 == 0) {
      LOG.warnf("labelling placement leader %s=%s in %s failed, retrying every %s: %s", LABEL, leading, namespace, retry, e.getMessage());
    }
    if (retryPending.compareAndSet(false, true)) {
      try {
        worker.schedule(
            () -> {
              retryPending.set(false);
              apply();
            },
            retry.toMillis(),
            TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException closed) {
        // Shutting down: the pod goes with the replica.
      }
    }
  }

  private static Thread thread(Runnable work) {
    var thread = new Thread(work, "placement-leader-label");
    thread.setDaemon(true);
    return thread;
  }

  /** One merge patch: the label set, or removed (a null in a merge patch deletes the key). */
  private void label(String pod, boolean leader) {
    var patch = "{\"metadata\":{\"labels\":{\"" + LABEL + "\":" + (leader ? "\"true\"" : "null") + "}}}";
    client.pods().inNamespace(namespace).withName(pod).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
  }

  /** Applies what is pending (a step-down's removal) for up to five seconds, then stops. */
  @Override
  public void close() {
    worker.shutdown();
    try {
      worker.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
