package io.gpuadmission.cluster;

import io.gpuadmission.quota.QuotaTree;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The team quota tree in force (the last good ElasticQuotaTree; none without one), whether the
 * tree's current version could be used, and why there can be none (the cluster does not serve
 * ElasticQuotaTree), for health, metrics and {@code /extender/inspect}.
 */
@ApplicationScoped
public class QuotaTreeStore {
  private final AtomicReference<QuotaTree> tree = new AtomicReference<>();
  private final AtomicReference<String> source = new AtomicReference<>("");
  private final AtomicReference<String> lastError = new AtomicReference<>();
  private final AtomicReference<String> notServed = new AtomicReference<>("");
  private final AtomicLong failures = new AtomicLong();
  private final java.util.List<Runnable> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();

  /** Runs {@code listener} after each change of the tree in force. */
  public void onChange(Runnable listener) {
    listeners.add(listener);
  }

  /** The tree in force, empty when the cluster has none. */
  public Optional<QuotaTree> tree() {
    return Optional.ofNullable(tree.get());
  }

  /** {@code kube-system/quotas}: the object the tree in force came from, empty without one. */
  public String source() {
    return source.get();
  }

  /** Puts {@code checked} (from object {@code from}) in force. */
  public void replace(QuotaTree checked, String from) {
    notServed.set("");
    tree.set(checked);
    source.set(from);
    lastError.set(null);
    listeners.forEach(Runnable::run);
  }

  /** The tree was deleted: no quota applies. */
  public void clear() {
    notServed.set("");
    tree.set(null);
    source.set("");
    lastError.set(null);
    listeners.forEach(Runnable::run);
  }

  /** The cluster does not serve ElasticQuotaTree, for {@code reason}: no tree, and no quota applies. */
  public void notServed(String reason) {
    notServed.set(reason);
    tree.set(null);
    source.set("");
    lastError.set(null);
    listeners.forEach(Runnable::run);
  }

  /** Why the cluster can have no tree now (it does not serve ElasticQuotaTree); empty when it can. */
  public String notServed() {
    return notServed.get();
  }

  /** The tree's current version breaks a rule: the last good tree stays in force. */
  public void failed(String reason) {
    lastError.set(reason);
    failures.incrementAndGet();
  }

  public Optional<String> lastError() {
    return Optional.ofNullable(lastError.get());
  }

  public long failures() {
    return failures.get();
  }
}
