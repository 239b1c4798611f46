package io.gpuadmission.placement;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * Whether this replica may bind now. Binds run inside the gate; stepping down first closes it and
 * then waits for the binds in flight, so that by the time the Lease is released no bind of this
 * replica can still land after the next leader has read the pods.
 */
public final class LeaderGate {
  private final ReentrantReadWriteLock inFlight = new ReentrantReadWriteLock();
  private final String identity;
  private volatile boolean leading;
  private volatile String leader = "";
  private final List<Runnable> changes = new CopyOnWriteArrayList<>();

  public LeaderGate(String identity) {
    this.identity = identity;
  }

  /** A gate that is always open: one replica, no cluster to elect in. */
  public static LeaderGate alone(String identity) {
    var gate = new LeaderGate(identity);
    gate.lead();
    return gate;
  }

  /** Runs {@code work} if this replica leads; empty when it does not. */
  public <T> Optional<T> whileLeading(Supplier<T> work) {
    inFlight.readLock().lock();
    try {
      return leading ? Optional.of(work.get()) : Optional.empty();
    } finally {
      inFlight.readLock().unlock();
    }
  }

  public void lead() {
    leader = identity;
    leading = true;
    changes.forEach(Runnable::run);
  }

  /** Runs {@code listener} after each {@link #lead()} and {@link #stepDown()}; it must not block. */
  public void onChange(Runnable listener) {
    changes.add(listener);
  }

  /** Stops taking binds and returns once those in flight have finished. */
  public void stepDown() {
    leading = false;
    inFlight.writeLock().lock();
    inFlight.writeLock().unlock();
    changes.forEach(Runnable::run);
  }

  public void leaderIs(String holder) {
    leader = holder == null ? "" : holder;
  }

  public boolean leading() {
    return leading;
  }

  public String identity() {
    return identity;
  }

  /** The Lease holder last seen, or "" when unknown. */
  public String leader() {
    return leader;
  }
}
