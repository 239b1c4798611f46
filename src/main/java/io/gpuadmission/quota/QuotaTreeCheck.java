package io.gpuadmission.quota;

import java.util.List;

/** What checking a tree against the rules gives: the tree, or every rule it breaks. */
public sealed interface QuotaTreeCheck {
  /** The tree keeps every rule. */
  record Valid(QuotaTree tree) implements QuotaTreeCheck {}

  /** The rules broken, in the order of the tree (depth first, as written). */
  record Invalid(List<QuotaRuleViolation> violations) implements QuotaTreeCheck {
    public Invalid {
      violations = List.copyOf(violations);
    }
  }
}
