package io.gpuadmission.cluster;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.policy.GpuPolicy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Elects the one replica that binds, with fabric8's LeaderElector on a coordination.k8s.io/v1
 * Lease. A new leader first rebuilds its ledger from a fresh list of the pods (its informer may lag
 * behind the binds of the previous leader), then opens its gate; a leader that stops leading
 * closes its gate and waits for its binds in flight. Renewing stops at {@code renewDeadline},
 * before another replica may take the Lease at {@code leaseDuration}, so two leaders never bind at
 * once while clocks are sane.
 */
public final class PlacementLeadership implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(PlacementLeadership.class);

  /** Lease timing. */
  public record Timing(Duration leaseDuration, Duration renewDeadline, Duration retryPeriod) {}

  private final KubernetesClient client;
  private final GpuLedger ledger;
  private final LeaderGate gate;
  private final Supplier<GpuPolicy> policies;
  private volatile CompletableFuture<?> running;
  /** Changes when this replica starts or stops leading: a pod list of an earlier term must not open the gate. */
  private final java.util.concurrent.atomic.AtomicLong terms = new java.util.concurrent.atomic.AtomicLong();
  private volatile Duration retry = Duration.ofSeconds(2);
  private final java.util.concurrent.ScheduledExecutorService rebuilds =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        var thread = new Thread(r, "placement-leader-rebuild");
        thread.setDaemon(true);
        return thread;
      });

  public PlacementLeadership(KubernetesClient client, GpuLedger ledger, LeaderGate gate, Supplier<GpuPolicy> policies) {
    this.client = client;
    this.ledger = ledger;
    this.gate = gate;
    this.policies = policies;
  }

  public PlacementLeadership start(String namespace, String leaseName, Timing timing) {
    retry = timing.retryPeriod();
    var config =
        new LeaderElectionConfigBuilder()
            .withName(leaseName)
            .withLock(new LeaseLock(namespace, leaseName, gate.identity()))
            .withLeaseDuration(timing.leaseDuration())
            .withRenewDeadline(timing.renewDeadline())
            .withRetryPeriod(timing.retryPeriod())
            .withReleaseOnCancel(true)
            .withLeaderCallbacks(new LeaderCallbacks(this::becomeLeader, this::stopLeading, gate::leaderIs))
            .build();
    running = client.leaderElector().withConfig(config).build().start();
    return this;
  }

  /** Steps down (waiting for binds in flight), then releases the Lease. */
  @Override
  public void close() {
    rebuilds.shutdownNow();
    gate.stepDown();
    var future = running;
    if (future != null) {
      future.cancel(true);
    }
  }

  /**
   * Holding the Lease, reads the pods before opening the gate, off fabric8's election thread (it
   * calls back synchronously and must go on renewing the Lease); when that list fails (the API
   * server away, RBAC not in force yet) it is tried again every retry period for as long as this
   * replica holds the Lease, so a leader never holds the Lease with its gate shut for good.
   */
  private void becomeLeader() {
    var term = terms.incrementAndGet();
    rebuilds.execute(() -> rebuildThenLead(term, 0));
  }

  private void rebuildThenLead(long term, int attempt) {
    if (terms.get() != term) {
      return;
    }
    try {
      var claims = BoundPods.list(client, policies.get());
      ledger.rebuild(claims);
      synchronized (terms) {
        if (terms.get() != term) {
          return; // stepped down while listing
        }
        gate.lead();
      }
      LOG.infof("%s leads placement: ledger rebuilt from %d bound GPU pods", gate.identity(), claims.size());
    } catch (RuntimeException e) {
      // One line at the first failure, then about one a minute while it lasts.
      if (attempt % Math.max(1, (int) (60_000 / Math.max(1, retry.toMillis()))) == 0) {
        LOG.warnf("%s holds the placement Lease but cannot list the pods to rebuild its ledger (%s); binds wait, retrying every %s",
            gate.identity(), e.getMessage(), retry);
      }
      rebuilds.schedule(() -> rebuildThenLead(term, attempt + 1), retry.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    }
  }

  private void stopLeading() {
    synchronized (terms) {
      terms.incrementAndGet();
    }
    gate.stepDown();
    LOG.infof("%s stopped leading placement", gate.identity());
  }
}
