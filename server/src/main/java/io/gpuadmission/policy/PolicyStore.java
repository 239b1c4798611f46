package io.gpuadmission.policy;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Holds the policy in force. A request calls {@link #current()} once and uses that snapshot from
 * start to end; a reload replaces the whole snapshot atomically.
 */
@ApplicationScoped
public class PolicyStore {
  private final AtomicReference<ActivePolicy> active =
      new AtomicReference<>(ActivePolicy.builtIn(PolicyParser.builtInDefault()));
  private final List<BiConsumer<GpuPolicy, GpuPolicy>> listeners = new CopyOnWriteArrayList<>();
  /** Until the cluster's policy has been read once: why the policy in force may not be the cluster's. Null once read. */
  private volatile Supplier<Optional<String>> unread;

  /**
   * From now until {@code why} answers empty (once; it is not asked again after), the policy in
   * force is not known to be the cluster's: the built-in default stands in only for want of a
   * read. The cluster's policy watcher calls this at start; without a cluster nothing does, and
   * the built-in default is the policy.
   */
  public void awaitRead(Supplier<Optional<String>> why) {
    unread = why;
  }

  /** Why the policy in force is not (yet) known to be the cluster's; empty once it has been read, or without a cluster. */
  public Optional<String> unread() {
    var why = unread;
    if (why == null) {
      return Optional.empty();
    }
    var reason = why.get();
    if (reason.isEmpty()) {
      unread = null;
    }
    return reason;
  }

  public GpuPolicy current() {
    return active.get().policy();
  }

  public ActivePolicy active() {
    return active.get();
  }

  /** Puts {@code policy} in force and returns the new generation. */
  public ActivePolicy replace(GpuPolicy policy, PolicySource source) {
    var before = active.get().policy();
    var now = active.updateAndGet(old -> new ActivePolicy(policy, source, old.generation() + 1));
    listeners.forEach(listener -> listener.accept(before, policy));
    return now;
  }

  /**
   * Calls {@code action} with the new policy after each replacement that changes {@code part} of
   * it, for state derived from that part (an informer selecting by the job label, nodes mapped by
   * the node labels).
   */
  public void onChangeOf(Function<GpuPolicy, ?> part, Consumer<GpuPolicy> action) {
    listeners.add(
        (before, after) -> {
          if (!Objects.equals(part.apply(before), part.apply(after))) {
            action.accept(after);
          }
        });
  }

  /** Where the policy in force came from. */
  public enum PolicySource {
    DEFAULT,
    CONFIGMAP
  }

  /** The policy in force, where it came from, and how many times it has been replaced. */
  public record ActivePolicy(GpuPolicy policy, PolicySource source, long generation) {
    static ActivePolicy builtIn(GpuPolicy policy) {
      return new ActivePolicy(policy, PolicySource.DEFAULT, 1);
    }
  }
}
