package io.gpuadmission.policy;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Holds the policy in force. A request calls {@link #current()} once and uses that snapshot from
 * start to end; a reload replaces the whole snapshot atomically.
 */
@ApplicationScoped
public class PolicyStore {
  private final AtomicReference<ActivePolicy> active =
      new AtomicReference<>(ActivePolicy.builtIn(PolicyParser.builtInDefault()));

  public GpuPolicy current() {
    return active.get().policy();
  }

  public ActivePolicy active() {
    return active.get();
  }

  /** Puts {@code policy} in force and returns the new generation. */
  public ActivePolicy replace(GpuPolicy policy, PolicySource source) {
    return active.updateAndGet(old -> new ActivePolicy(policy, source, old.generation() + 1));
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
