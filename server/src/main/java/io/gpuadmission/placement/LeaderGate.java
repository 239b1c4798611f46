package io.gpuadmission.placement;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * Whether this replica may bind now, and who holds the placement Lease as far as it knows. Binds
 * run inside the gate; stepping down first closes it and then waits for the binds in flight, so
 * that by the time the Lease is released no bind of this replica can still land after the next
 * leader has read the pods.
 *
 * <p>Both expire with time, whatever the election thread is doing (an HTTP call to a stalled API
 * server can hold it for long): an open gate binds only until its last renewal plus the renew
 * deadline, which comes before the Lease can pass to another replica, and a holder is named only
 * until its Lease expires.
 */
public final class LeaderGate {
  private final ReentrantReadWriteLock inFlight = new ReentrantReadWriteLock();
  private final String identity;
  private final Clock clock;
  private final Instant created;
  private volatile boolean open;
  /** This replica binds until then: its last renewal of the Lease plus the renew deadline. */
  private volatile Instant renewedUntil = Instant.MIN;
  private volatile Holder holder = Holder.NONE;
  private final List<Runnable> changes = new CopyOnWriteArrayList<>();

  /**
   * A Lease holder as last seen, and when its Lease expires (renew time plus lease duration). An
   * empty identity is a Lease held by nobody (released), seen at {@code until}.
   */
  public record Holder(String identity, Instant until) {
    static final Holder NONE = new Holder("", Instant.MIN);
  }

  public LeaderGate(String identity) {
    this(identity, Clock.systemUTC());
  }

  public LeaderGate(String identity, Clock clock) {
    this.identity = identity;
    this.clock = clock;
    this.created = clock.instant();
  }

  /** A gate that is always open: one replica, no cluster to elect in. */
  public static LeaderGate alone(String identity) {
    var gate = new LeaderGate(identity);
    gate.renewedUntil = Instant.MAX;
    gate.holder = new Holder(identity, Instant.MAX);
    gate.lead();
    return gate;
  }

  /** Runs {@code work} if this replica leads; empty when it does not. */
  public <T> Optional<T> whileLeading(Supplier<T> work) {
    inFlight.readLock().lock();
    try {
      return leading() ? Optional.of(work.get()) : Optional.empty();
    } finally {
      inFlight.readLock().unlock();
    }
  }

  /** Opens the gate (the ledger is rebuilt); it binds while renewals keep {@link #renewedUntil} ahead. */
  public void lead() {
    open = true;
    changes.forEach(Runnable::run);
  }

  /** Runs {@code listener} after each {@link #lead()} and {@link #stepDown()}; it must not block. */
  public void onChange(Runnable listener) {
    changes.add(listener);
  }

  /** Stops taking binds and returns once those in flight have finished. */
  public void stepDown() {
    open = false;
    inFlight.writeLock().lock();
    inFlight.writeLock().unlock();
    changes.forEach(Runnable::run);
  }

  /** This replica wrote the Lease as its holder; it may bind until {@code until} (renew deadline). */
  public void renewed(Instant until) {
    if (until.isAfter(renewedUntil)) {
      renewedUntil = until;
    }
  }

  /** The Lease was read or written: {@code holder} ("" for nobody) holds it until {@code until}. */
  public void leaseSeen(String holder, Instant until) {
    this.holder = new Holder(holder == null ? "" : holder, until);
  }

  /** Whether this replica binds now: its gate is open and its last renewal is recent enough. */
  public boolean leading() {
    return open && clock.instant().isBefore(renewedUntil);
  }

  /** Whether this replica renewed the Lease at some time and then let the renew deadline pass. */
  public boolean renewalOverdue() {
    return renewedUntil != Instant.MIN && !clock.instant().isBefore(renewedUntil);
  }

  public String identity() {
    return identity;
  }

  /** The holder of a Lease that has not expired, or "" when there is none or none is known. */
  public String leader() {
    var seen = holder;
    return clock.instant().isBefore(seen.until()) ? seen.identity() : "";
  }

  /** The last holder seen, if it is no longer {@link #leader()} (its Lease expired or was released). */
  public Optional<Holder> formerLeader() {
    var seen = holder;
    return !seen.identity().isEmpty() && !clock.instant().isBefore(seen.until()) ? Optional.of(seen) : Optional.empty();
  }

  /** For how long no replica has held an unexpired Lease, as far as this one knows; zero while one does. */
  public Duration leaderless() {
    var now = clock.instant();
    var seen = holder;
    if (!seen.identity().isEmpty() && now.isBefore(seen.until())) {
      return Duration.ZERO;
    }
    var since = seen.until().isAfter(created) ? seen.until() : created;
    return now.isAfter(since) ? Duration.between(since, now) : Duration.ZERO;
  }
}
