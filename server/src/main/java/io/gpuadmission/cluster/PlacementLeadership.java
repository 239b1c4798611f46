package io.gpuadmission.cluster;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.RequestConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.policy.GpuPolicy;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Elects the one replica that binds, with fabric8's LeaderElector on a coordination.k8s.io/v1
 * Lease, for as long as this replica runs. A new leader first rebuilds its ledger from a fresh list
 * of the pods (its informer may lag behind the binds of the previous leader), then opens its gate;
 * a leader that stops leading closes its gate and waits for its binds in flight.
 *
 * <p>A fabric8 elector runs once: its future ends when its renewals stop (renew deadline passed,
 * another holder seen), and then it never campaigns again. So each campaign is a new elector, and a
 * new one starts whenever the last one ends, however it ended. The gate also stops binding on its
 * own at the last renewal plus the renew deadline, before another replica may take the Lease at the
 * lease duration: fabric8 checks its deadline only between calls, and a call to a stalled API server
 * takes as long as the client lets it. When that happens this replica steps down, leaves that
 * elector and campaigns with a new one; its Lease calls go through a client that waits at most half
 * the renew deadline and does not retry (the elector retries every retry period itself).
 */
public final class PlacementLeadership implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(PlacementLeadership.class);

  /** Lease timing. */
  public record Timing(Duration leaseDuration, Duration renewDeadline, Duration retryPeriod) {}

  /** One fabric8 elector: it campaigns, leads for one term at most, then ends. */
  private static final class Campaign {
    final long number;
    volatile LeaderElector elector;
    volatile CompletableFuture<?> future = CompletableFuture.completedFuture(null);
    /** fabric8 said it leads (it does so on reading a Lease that names this replica, before renewing it). */
    private boolean told;
    /** This elector wrote the Lease as its holder. */
    private boolean wrote;
    /** A term: told and written, until this campaign ends or steps down. */
    volatile boolean leading;

    Campaign(long number) {
      this.number = number;
    }

    /** Records one of the two conditions of a term; true when this completes them. */
    synchronized boolean begins(boolean toldNow, boolean wroteNow) {
      told |= toldNow;
      wrote |= wroteNow;
      if (!told || !wrote || leading) {
        return false;
      }
      leading = true;
      return true;
    }

    synchronized void ends() {
      leading = false;
      told = false;
    }
  }

  private final KubernetesClient client;
  /** For the rebuild's list of every pod: its pages may take as long as the informers'. */
  private final KubernetesClient lists;
  private final GpuLedger ledger;
  private final LeaderGate gate;
  private final Supplier<GpuPolicy> policies;
  /** Changes when this replica starts or stops leading: a pod list of an earlier term must not open the gate. */
  private final AtomicLong terms = new AtomicLong();
  private final AtomicLong campaigns = new AtomicLong();
  /** Lease calls failed in a row, for the log. */
  private final AtomicLong failedCalls = new AtomicLong();
  private final ScheduledExecutorService elections = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "placement-election"));
  private final ScheduledExecutorService rebuilds = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "placement-leader-rebuild"));
  private KubernetesClient leaseClient;
  private String namespace;
  private String leaseName;
  private Timing timing;
  private volatile Campaign current;
  private volatile boolean closed;

  public PlacementLeadership(KubernetesClient client, GpuLedger ledger, LeaderGate gate, Supplier<GpuPolicy> policies) {
    this.client = client;
    this.lists = Informers.listing(client);
    this.ledger = ledger;
    this.gate = gate;
    this.policies = policies;
  }

  public PlacementLeadership start(String namespace, String leaseName, Timing timing) {
    this.namespace = namespace;
    this.leaseName = leaseName;
    this.timing = timing;
    // Shares the client's connections; closing it would close them.
    var leaseCalls =
        new RequestConfigBuilder(client.getConfiguration().getRequestConfig())
            .withRequestTimeout((int) timing.renewDeadline().dividedBy(2).toMillis())
            .withRequestRetryBackoffLimit(0)
            .build();
    leaseClient = client.newClient(leaseCalls).adapt(KubernetesClient.class);
    campaign(); // here, so that a configuration fabric8 refuses fails the start
    var period = timing.retryPeriod().toMillis();
    elections.scheduleWithFixedDelay(this::checkRenewal, period, period, TimeUnit.MILLISECONDS);
    return this;
  }

  /** Steps down (waiting for binds in flight), then releases the Lease if this replica holds it. */
  @Override
  public void close() {
    closed = true;
    elections.shutdownNow();
    rebuilds.shutdownNow();
    gate.stepDown();
    var campaign = current;
    if (campaign == null) {
      return;
    }
    campaign.future.cancel(true);
    try {
      campaign.elector.release();
    } catch (KubernetesClientException e) {
      LOG.infof("%s could not release the placement Lease (%s); another replica takes it when it expires", gate.identity(), e.getMessage());
    }
  }

  /** A new campaign after the last one ended; one that cannot start is tried again. */
  private void campaignAgain() {
    try {
      campaign();
    } catch (RuntimeException e) {
      LOG.warnf("%s could not start campaigning for the placement Lease (%s); trying again in %s", gate.identity(), e, timing.retryPeriod());
      later(this::campaignAgain, timing.retryPeriod());
    }
  }

  private void campaign() {
    if (closed) {
      return;
    }
    var campaign = new Campaign(campaigns.incrementAndGet());
    var config =
        new LeaderElectionConfigBuilder()
            .withName(leaseName)
            .withLock(new ObservedLeaseLock(namespace, leaseName, gate.identity(), new ObservedLeaseLock.Observer() {
              @Override
              public void seen(LeaderElectionRecord record, boolean written) {
                PlacementLeadership.this.seen(campaign, record, written);
              }

              @Override
              public void failed(KubernetesClientException e) {
                leaseCallFailed(e);
              }
            }))
            .withLeaseDuration(timing.leaseDuration())
            .withRenewDeadline(timing.renewDeadline())
            .withRetryPeriod(timing.retryPeriod())
            // Released by close() only, after the binds in flight; never by an elector left
            // behind while a newer one, under the same name, may hold the Lease.
            .withReleaseOnCancel(false)
            .withLeaderCallbacks(new LeaderCallbacks(() -> started(campaign), () -> stopped(campaign.number), holder -> {}))
            .build();
    campaign.elector = leaseClient.leaderElector().withConfig(config).build();
    current = campaign;
    campaign.future = campaign.elector.start();
    campaign.future.whenComplete((result, failure) -> later(() -> ended(campaign, failure), Duration.ZERO));
  }

  /** Each Lease record read or written: who holds it until when, and this replica's renewals. */
  private void seen(Campaign campaign, LeaderElectionRecord record, boolean written) {
    failedCalls.set(0);
    var holder = Objects.requireNonNullElse(record.getHolderIdentity(), "");
    var renewed = record.getRenewTime().toInstant();
    gate.leaseSeen(holder, renewed.plus(record.getLeaseDuration()));
    if (written && holder.equals(gate.identity())) {
      gate.renewed(renewed.plus(timing.renewDeadline()));
      if (campaign.begins(false, true)) {
        beginTerm(campaign);
      }
    }
  }

  /**
   * One WARN line at the first failed Lease call and about one a minute while they go on (fabric8's
   * own per-attempt WARN with a stack trace is turned down in application.properties).
   */
  private void leaseCallFailed(KubernetesClientException e) {
    if (e.getCode() == 409) {
      return; // another replica wrote first: the election at work, not a failure
    }
    var failures = failedCalls.getAndIncrement();
    if (failures % Math.max(1, 60_000 / Math.max(1, timing.retryPeriod().toMillis())) == 0) {
      var answer = e.getCode() <= 0 ? "no answer from the API server: " + describe(e) : "HTTP " + e.getCode() + ": " + describe(e);
      LOG.warnf("%s: a call for placement Lease %s/%s failed (%s); the election retries every %s", gate.identity(), namespace, leaseName, answer, timing.retryPeriod());
    }
  }

  private static String describe(KubernetesClientException e) {
    if (e.getStatus() != null && e.getStatus().getMessage() != null) {
      return e.getStatus().getMessage();
    }
    return e.getCause() == null || e.getCause().getMessage() == null ? e.getMessage() : e.getCause().getMessage();
  }

  /** fabric8's onStartLeading, on its election thread. */
  private void started(Campaign campaign) {
    if (campaign.begins(true, false)) {
      beginTerm(campaign);
    }
  }

  /** Rebuilds the ledger, then opens the gate; off fabric8's election thread, which must go on renewing. */
  private void beginTerm(Campaign campaign) {
    if (closed || current != campaign) {
      campaign.ends();
      return;
    }
    var term = terms.incrementAndGet();
    try {
      rebuilds.execute(() -> rebuildThenLead(term, 0));
    } catch (RejectedExecutionException shuttingDown) {
      // close() steps down.
    }
  }

  /** fabric8's onStopLeading; a campaign already left behind has nothing to say. */
  private void stopped(long number) {
    var campaign = current;
    if (!closed && campaign != null && campaign.number == number) {
      stepDown(campaign, "it lost the placement Lease");
    }
  }

  /** The elector's future ended: whatever the cause, campaign again after a retry period. */
  private void ended(Campaign campaign, Throwable failure) {
    if (closed || current != campaign) {
      return;
    }
    if (campaign.leading) {
      stepDown(campaign, "its election ended");
    }
    if (failure != null && !(failure instanceof CancellationException)) {
      LOG.warnf("%s: placement election ended with %s; campaigning again", gate.identity(), failure);
    }
    later(this::campaignAgain, timing.retryPeriod());
  }

  /**
   * Every retry period: a leader whose renewals have not reached the API server within the renew
   * deadline has already stopped binding (the gate checks the time); it steps down here and
   * campaigns with a new elector, since the old one may wait out a call to a stalled API server.
   */
  private void checkRenewal() {
    var campaign = current;
    if (closed || campaign == null || !campaign.leading || !gate.renewalOverdue()) {
      return;
    }
    stepDown(campaign, "it could not renew the placement Lease within the renew deadline (" + timing.renewDeadline() + ")");
    // Cancelling runs fabric8's stopLeading, which waits for the elector's call in flight.
    var abandoned = new Thread(() -> campaign.future.cancel(true), "placement-election-abandon");
    abandoned.setDaemon(true);
    abandoned.start();
    campaignAgain();
  }

  /**
   * Holding the Lease, reads the pods before opening the gate; when that list fails (the API
   * server away, RBAC not in force yet) it is tried again every retry period for as long as this
   * replica holds the Lease, so a leader never holds the Lease with its gate shut for good.
   */
  private void rebuildThenLead(long term, int attempt) {
    if (terms.get() != term) {
      return;
    }
    var retry = timing.retryPeriod();
    // Begun before the list is read: what the informer tells meanwhile is newer than the list.
    try (var rebuild = ledger.beginRebuild()) {
      var claims = BoundPods.list(lists, policies.get());
      rebuild.apply(claims);
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
      try {
        rebuilds.schedule(() -> rebuildThenLead(term, attempt + 1), retry.toMillis(), TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException shuttingDown) {
        // close() steps down.
      }
    }
  }

  private void stepDown(Campaign campaign, String why) {
    campaign.ends();
    synchronized (terms) {
      terms.incrementAndGet();
    }
    gate.stepDown();
    LOG.infof("%s stopped leading placement: %s", gate.identity(), why);
  }

  private void later(Runnable work, Duration delay) {
    try {
      elections.schedule(work, delay.toMillis(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closing) {
      // close() has stopped the elections.
    }
  }

  private static Thread daemon(Runnable work, String name) {
    var thread = new Thread(work, name);
    thread.setDaemon(true);
    return thread;
  }
}
