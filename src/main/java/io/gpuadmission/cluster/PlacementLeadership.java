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

  public PlacementLeadership(KubernetesClient client, GpuLedger ledger, LeaderGate gate, Supplier<GpuPolicy> policies) {
    this.client = client;
    this.ledger = ledger;
    this.gate = gate;
    this.policies = policies;
  }

  public PlacementLeadership start(String namespace, String leaseName, Timing timing) {
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
    gate.stepDown();
    var future = running;
    if (future != null) {
      future.cancel(true);
    }
  }

  private void becomeLeader() {
    var claims = BoundPods.list(client, policies.get());
    ledger.rebuild(claims);
    gate.lead();
    LOG.infof("%s leads placement: ledger rebuilt from %d bound GPU pods", gate.identity(), claims.size());
  }

  private void stopLeading() {
    gate.stepDown();
    LOG.infof("%s stopped leading placement", gate.identity());
  }
}
