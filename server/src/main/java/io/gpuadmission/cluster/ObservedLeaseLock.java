package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * fabric8's LeaseLock, telling {@link Observer} every Lease record it reads or writes, so that the
 * leader gate learns each renewal (fabric8's callbacks only say when the holder changes).
 *
 * <p>Two of fabric8 7.4's ways for an elector to stop for good are closed here. Its acquire loop
 * retries only {@link KubernetesClientException}; anything else thrown from the lock ends the loop
 * without ending the elector's future, so nothing would ever campaign again. And a Lease without
 * {@code leaseDurationSeconds}, {@code renewTime} or {@code acquireTime} (a bare Lease made with
 * kubectl, or by another tool) made fabric8 throw exactly such an exception on every read: it is
 * read as client-go reads it, missing numbers as zero and missing times as long past, so that it
 * counts as expired and can be taken. (A Lease without a spec counted as no Lease at all: fabric8
 * tried to create it, 409, for ever.)
 */
final class ObservedLeaseLock extends LeaseLock {
  private static final ZonedDateTime LONG_AGO = Instant.EPOCH.atZone(ZoneOffset.UTC);

  /** Told each Lease record read ({@code written} false) or written by this replica (true), and each failed call. */
  interface Observer {
    void seen(LeaderElectionRecord record, boolean written);

    void failed(KubernetesClientException e);
  }

  private final Observer observer;

  ObservedLeaseLock(String namespace, String name, String identity, Observer observer) {
    super(namespace, name, identity);
    this.observer = observer;
  }

  @Override
  public LeaderElectionRecord get(KubernetesClient client) {
    var record = observed("read", () -> super.get(client));
    if (record != null) {
      observer.seen(record, false);
    }
    return record;
  }

  @Override
  public void create(KubernetesClient client, LeaderElectionRecord record) {
    observed("create", () -> {
      super.create(client, record);
      return null;
    });
    observer.seen(record, true);
  }

  @Override
  public void update(KubernetesClient client, LeaderElectionRecord record) {
    observed("update", () -> {
      super.update(client, record);
      return null;
    });
    observer.seen(record, true);
  }

  @Override
  protected LeaderElectionRecord toRecord(Lease lease) {
    var spec = lease.getSpec() == null ? new LeaseSpec() : lease.getSpec();
    return new LeaderElectionRecord(
        spec.getHolderIdentity(),
        Duration.ofSeconds(Objects.requireNonNullElse(spec.getLeaseDurationSeconds(), 0)),
        Objects.requireNonNullElse(spec.getAcquireTime(), LONG_AGO),
        Objects.requireNonNullElse(spec.getRenewTime(), LONG_AGO),
        Objects.requireNonNullElse(spec.getLeaseTransitions(), 0));
  }

  /** Any failure told, and thrown as the one exception fabric8's election loops retry. */
  private <T> T observed(String action, Supplier<T> call) {
    try {
      return call.get();
    } catch (KubernetesClientException e) {
      observer.failed(e);
      throw e;
    } catch (RuntimeException e) {
      var failure = new KubernetesClientException("could not " + action + " the placement Lease: " + e, e);
      observer.failed(failure);
      throw failure;
    }
  }
}
