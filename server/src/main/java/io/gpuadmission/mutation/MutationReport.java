package io.gpuadmission.mutation;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** Collects, while rules run, which rules changed the pod and what the user should be told. */
public final class MutationReport {
  static final String PREFIX = "gpu-admission: ";
  private final Set<String> changedRules = new LinkedHashSet<>();
  private final List<String> warnings = new ArrayList<>();

  /** A rule changed the pod; {@code what} says how, in a few words. */
  public void changed(String rule, String what) {
    changedRules.add(rule);
    warnings.add(PREFIX + what);
  }

  /** Something the user should know although nothing changed (a conflict, a skipped rule). */
  public void note(String what) {
    warnings.add(PREFIX + what);
  }

  /** Rules that changed the pod, in the order they ran. */
  public List<String> changedRules() {
    return List.copyOf(changedRules);
  }

  public List<String> warnings() {
    return List.copyOf(warnings);
  }
}
