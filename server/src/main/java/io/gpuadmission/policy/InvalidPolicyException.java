package io.gpuadmission.policy;

import java.util.List;
import java.util.stream.Collectors;

/** A policy document that cannot be used; the message lists every error found, one per line. */
public final class InvalidPolicyException extends Exception {
  private static final long serialVersionUID = 1L;
  private final transient List<PolicyError> errors;

  public InvalidPolicyException(List<PolicyError> errors) {
    super(errors.stream().map(PolicyError::toString).collect(Collectors.joining("\n")));
    this.errors = List.copyOf(errors);
  }

  public List<PolicyError> errors() {
    return errors;
  }
}
