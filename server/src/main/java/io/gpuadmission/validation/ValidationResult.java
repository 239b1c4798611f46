package io.gpuadmission.validation;

import java.util.ArrayList;
import java.util.List;

/** What validation found: refusals (any one refuses the object) and warnings. */
public final class ValidationResult {
  private final List<Violation> violations = new ArrayList<>();
  private final List<String> warnings = new ArrayList<>();

  public void refuse(String rule, String path, String message) {
    violations.add(new Violation(rule, path, message));
  }

  /** Adds {@code advice} to every refusal, for what applies to all of them (how the object can change). */
  public void adviseOnRefusals(String advice) {
    violations.replaceAll(v -> new Violation(v.rule(), v.path(), v.message() + "; " + advice));
  }

  public void warn(String message) {
    if (!warnings.contains(message)) {
      warnings.add(message);
    }
  }

  public void addAll(ValidationResult other) {
    violations.addAll(other.violations);
    other.warnings.forEach(this::warn);
  }

  public List<Violation> violations() {
    return List.copyOf(violations);
  }

  public List<String> warnings() {
    return List.copyOf(warnings);
  }

  public boolean refused() {
    return !violations.isEmpty();
  }
}
